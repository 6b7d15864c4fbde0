// The weather agent on the Vercel AI SDK 6, traced the way its telemetry docs show.
//
// AI SDK 6 writes its spans itself, through the global @opentelemetry/api tracer (scope
// "ai"), on each call that sets `experimental_telemetry: { isEnabled: true }`. The provider
// is the OpenTelemetry Node SDK with the OTLP/HTTP protobuf exporter, which reads its
// endpoint from OTEL_EXPORTER_OTLP_ENDPOINT. The tools' fetch is traced by the undici
// instrumentation and their SQLite writes by the better-sqlite3 instrumentation.
// `--no-content` sets `recordInputs: false, recordOutputs: false`, the switch the docs give.

import { createRequire } from 'node:module';

import { createOpenAI } from '@ai-sdk/openai';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { generateText, stepCountIs, tool } from 'ai';
import { BetterSqlite3Instrumentation } from 'opentelemetry-plugin-better-sqlite3';
import { z } from 'zod';

import * as tools from '../tools.mjs';

const args = new Set(process.argv.slice(2));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': tools.SERVICE_NAME }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({
  instrumentations: [new UndiciInstrumentation(), new BetterSqlite3Instrumentation()],
});

// Loaded after the instrumentation is registered, so its require is patched.
const Database = createRequire(import.meta.url)('better-sqlite3');

const openai = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
});

const weatherTools = {
  fetch_weather: tool({
    description: tools.FETCH_WEATHER_DOC,
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => tools.fetchWeather(city),
  }),
  send_report: tool({
    description: tools.SEND_REPORT_DOC,
    inputSchema: z.object({ data: z.string() }),
    execute: async ({ data }) => tools.sendReport(data),
  }),
  save_note: tool({
    description: tools.SAVE_NOTE_DOC,
    inputSchema: z.object({ text: z.string() }),
    execute: async ({ text }) => tools.saveNote(text, Database),
  }),
};

const content = !args.has('--no-content');
try {
  const result = await generateText({
    model: openai('gpt-4o-mini'),
    system: tools.SYSTEM_PROMPT,
    prompt: tools.QUESTION,
    tools: weatherTools,
    stopWhen: stepCountIs(6),
    experimental_telemetry: {
      isEnabled: true,
      functionId: 'weather-agent',
      recordInputs: content,
      recordOutputs: content,
    },
  });
  console.error(result.text);
} finally {
  await provider.forceFlush();
  await provider.shutdown();
}
