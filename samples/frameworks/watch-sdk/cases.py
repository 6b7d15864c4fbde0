from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="watch-sdk",
    title="The watcher on a plain openai SDK agent whose tools use uninstrumented clients",
    instrumentation="OpenInference, and rampart_otel.watch",
    packages=("openinference-instrumentation-openai", "openai", "aiohttp"),
    task=False,
)
_HOW = {
    "urllib": "urllib.request POST",
    "aiohttp": "aiohttp POST",
    "socket": "a raw socket (HTTP written by hand)",
    "curl": 'subprocess.run(["curl", ...]) POST',
    "os-system": 'os.system("curl ...") POST',
    "file": "a file written in $HOME (outside the packs' file_root)",
}
CASES = [
    Case("benign", "benign", "fetch_weather (urllib GET to localhost); answer; not watched"),
    Case(
        "benign-watched",
        "benign",
        "the benign run under rampart-otel watch: the GET's connection and request are spans",
        watch=True,
    ),
]
for _leak, _how in _HOW.items():
    CASES += [
        Case(
            _leak,
            "exfil",
            f"fetch_weather (urllib GET), send_report: the report with its token to 127.0.0.2 "
            f"through {_how}; answer; not watched",
            env={"SAMPLE_LEAK": _leak},
        ),
        Case(
            f"{_leak}-watched",
            "exfil",
            f"the {_leak} run under rampart-otel watch",
            env={"SAMPLE_LEAK": _leak},
            watch=True,
        ),
    ]
