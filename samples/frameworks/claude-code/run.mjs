// The weather task on Claude Code: the real CLI run non-interactively (`claude -p`), traced
// by its own OpenTelemetry export, switched on the way its monitoring docs tell users to.
//
//     node run.mjs QUESTION SYSTEM_PROMPT
//
// The recorder (samples/record_frameworks.py) passes the question and the system prompt
// (from samples/frameworks/tools.py, via cases.py) and the loopback addresses in the
// environment: ANTHROPIC_BASE_URL (the scripted model), ANTHROPIC_API_KEY,
// OTEL_EXPORTER_OTLP_ENDPOINT (its sink, protocol http/protobuf) and HOME (a fresh
// directory per case; `claude -p` needs no config file in it). A case adds the content
// switches (OTEL_LOG_USER_PROMPTS, OTEL_LOG_TOOL_DETAILS, OTEL_LOG_TOOL_CONTENT), detailed
// beta tracing (ENABLE_BETA_TRACING_DETAILED) or a caller's TRACEPARENT in its env. Claude Code's own Bash tool is the task's tool:
// the scripted model asks it for curl and sqlite3 commands (see cases.py).

import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [question, systemPrompt] = process.argv.slice(2);
if (!question) {
  console.error("usage: node run.mjs QUESTION [SYSTEM_PROMPT]");
  process.exit(2);
}

// Telemetry as the docs show it: the master switch, the traces beta, the OTLP exporter.
// Whatever the case set (content switches, TRACEPARENT, ...) stays as it is.
const env = {
  ...process.env,
  CLAUDE_CODE_ENABLE_TELEMETRY: "1",
  CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
  OTEL_TRACES_EXPORTER: "otlp",
  // No update checks, release notes, title generation or error reporting over the network.
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
};
// Detailed beta tracing sends its spans (OTLP http/json) to BETA_TRACING_ENDPOINT, not to
// OTEL_EXPORTER_OTLP_ENDPOINT: point it at the same collector.
if (env.ENABLE_BETA_TRACING_DETAILED && !env.BETA_TRACING_ENDPOINT) {
  env.BETA_TRACING_ENDPOINT = env.OTEL_EXPORTER_OTLP_ENDPOINT;
}

const claude = join(here, "node_modules", ".bin", "claude");
const args = [
  "-p",
  question,
  "--output-format",
  "json",
  // Non-interactive: Bash runs without a permission prompt (no bypass mode, which refuses
  // to start as root).
  "--allowedTools",
  "Bash",
];
if (systemPrompt) args.push("--append-system-prompt", systemPrompt);

const result = spawnSync(claude, args, {
  cwd: process.cwd(),
  env,
  encoding: "utf8",
  timeout: 240_000,
});
if (result.error) {
  console.error(`cannot run ${claude}: ${result.error.message}`);
  process.exit(1);
}
process.stderr.write(result.stderr);
let answer = result.stdout;
try {
  const parsed = JSON.parse(result.stdout);
  answer = `${parsed.subtype}: ${parsed.result}`;
  if (parsed.is_error) result.status = result.status || 1;
} catch {
  // not JSON: print it as it came
}
console.error(answer);
process.exit(result.status ?? 1);
