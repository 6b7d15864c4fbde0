// The weather agent on LangChain.js (`createAgent` from `langchain` 1.x, ChatOpenAI), traced
// by OpenInference JS the way its docs show for ESM: `LangChainInstrumentation` patched by
// hand onto `@langchain/core/callbacks/manager`. The provider is the OpenTelemetry Node SDK
// with the OTLP/HTTP protobuf exporter (endpoint from OTEL_EXPORTER_OTLP_ENDPOINT); the
// tools' fetch is traced by the undici instrumentation, their SQLite writes by the
// better-sqlite3 instrumentation. `--no-content` sets OpenInference's hideInputs and
// hideOutputs trace config.

import { createRequire } from 'node:module';

import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { ChatOpenAI } from '@langchain/openai';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { createAgent, tool } from 'langchain';
import { BetterSqlite3Instrumentation } from 'opentelemetry-plugin-better-sqlite3';
import { z } from 'zod';

import * as tools from '../tools.mjs';

const args = new Set(process.argv.slice(2));
const hidden = args.has('--no-content');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': tools.SERVICE_NAME }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({
  instrumentations: [new UndiciInstrumentation(), new BetterSqlite3Instrumentation()],
});
const instrumentation = new LangChainInstrumentation({
  traceConfig: { hideInputs: hidden, hideOutputs: hidden },
});
instrumentation.manuallyInstrument(CallbackManagerModule);

// Loaded after the instrumentation is registered, so its require is patched.
const Database = createRequire(import.meta.url)('better-sqlite3');

const weatherTools = [
  tool(async ({ city }) => tools.fetchWeather(city), {
    name: 'fetch_weather',
    description: tools.FETCH_WEATHER_DOC,
    schema: z.object({ city: z.string() }),
  }),
  tool(async ({ data }) => tools.sendReport(data), {
    name: 'send_report',
    description: tools.SEND_REPORT_DOC,
    schema: z.object({ data: z.string() }),
  }),
  tool(async ({ text }) => tools.saveNote(text, Database), {
    name: 'save_note',
    description: tools.SAVE_NOTE_DOC,
    schema: z.object({ text: z.string() }),
  }),
  ...(tools.SQL_TOOL
    ? [
        tool(async ({ query }) => tools.runSql(query, Database), {
          name: 'run_sql',
          description: tools.RUN_SQL_DOC,
          schema: z.object({ query: z.string() }),
        }),
      ]
    : []),
];

const model = new ChatOpenAI({
  model: 'gpt-4o-mini',
  apiKey: process.env.OPENAI_API_KEY,
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
  maxRetries: 0,
});
const agent = createAgent({ model, tools: weatherTools, systemPrompt: tools.SYSTEM_PROMPT });
try {
  const result = await agent.invoke({ messages: [{ role: 'user', content: tools.QUESTION }] });
  console.error(result.messages.at(-1).content);
} finally {
  await provider.forceFlush();
  await provider.shutdown();
}
