# The README's two commands: `make demo` and `make test`. Each sets up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint golden docs samples samples-attacks samples-frameworks samples-forms metamorphic crash fuzz bench screenshots screenshots-stores scale-out clean

$(VENV)/.runtime: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.test: pyproject.toml $(VENV)/.runtime
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

## demo: score the bundled sample traces against the sample policy
# (exit code 1 means "some verdict failed", which the samples are recorded to show)
demo: $(VENV)/.runtime
	$(BIN)/rampart-otel score samples/traces --policy samples/policy.yaml || test $$? -eq 1

## test: lint and the whole test suite, on every core (pytest-xdist; WORKERS=0 runs it in one
## process). `pytest -m unit` runs only the tests that start no process or server
## (CONTRIBUTING.md, "Running the tests").
WORKERS ?= auto
test: $(VENV)/.test lint
	$(BIN)/python -m pytest -q -n $(WORKERS)

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy rampart_otel

## golden: rewrite tests/golden/samples-report.json from the samples' report after an intended
## change of behaviour (review `git diff tests/golden/`, commit it with the change)
golden: $(VENV)/.test
	RAMPART_UPDATE_GOLDEN=1 $(BIN)/python -m pytest -q -rs tests/test_golden.py

## docs: regenerate docs/policy.md's vocabulary tables and docs/policy.schema.json from the code,
## and CONTRIBUTING.md's figures of the test suite from a collection of it
docs: $(VENV)/.test
	$(BIN)/python docs/generate_policy_reference.py
	$(BIN)/python docs/generate_contributing.py

## metamorphic: the no-false-SAFE property over the samples, with many random perturbation mixes
metamorphic: $(VENV)/.test
	RAMPART_METAMORPHIC_EXAMPLES=$${EXAMPLES:-3000} $(BIN)/python -m pytest -q tests/test_metamorphic.py

## crash: the collector SIGKILLed at random moments under load, many times (CI runs 3)
crash: $(VENV)/.test
	RAMPART_CRASH_KILLS=$${KILLS:-20} $(BIN)/python -m pytest -q tests/collector/test_crash_recovery.py -k random_moments

## scale-out: the OpenTelemetry Collector gateway (built by collector/build-gateway.sh: needs Go
## and the Go module proxy), three collectors and PostgreSQL; CI runs the test with a router
GATEWAY_BIN = collector/build/otelcol-rampart-gateway/otelcol-rampart-gateway
scale-out: $(VENV)/.test
	test -x $(GATEWAY_BIN) || collector/build-gateway.sh
	RAMPART_GATEWAY=$(abspath $(GATEWAY_BIN)) $(BIN)/python -m pytest -q tests/collector/test_scale_out.py

## fuzz: a million mutated inputs over every decoder and the OTLP/HTTP receiver (CI runs 15,000)
fuzz: $(VENV)/.test
	$(BIN)/python tests/fuzzing.py --inputs $${INPUTS:-1000000}

## samples: re-record samples/traces from the real instrumentation libraries
samples: $(VENV)/.test
	$(BIN)/python samples/record.py

## samples-attacks: re-record samples/attacks/ (the policy packs' recorded attacks)
samples-attacks: $(VENV)/.test
	$(BIN)/python samples/record_attacks.py

## samples-forms: re-record tests/receivers/forms/ (one run per library: OTLP, console, Zipkin)
samples-forms: $(VENV)/.test
	$(BIN)/python samples/record_forms.py

## samples-frameworks: re-record samples/traces/<framework>/ (one runtime per framework; slow)
samples-frameworks: $(VENV)/.test
	$(BIN)/python samples/record_frameworks.py

## screenshots: the HTML report and audit page of the samples, in Chromium (docs/screenshots/)
screenshots: $(VENV)/.test
	$(BIN)/python docs/screenshots/make.py

## screenshots-stores: our verdicts in Phoenix's and MLflow's UIs (needs .ci/stores-venvs, chromium)
screenshots-stores: $(VENV)/.test
	$(BIN)/python docs/screenshots/stores.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
