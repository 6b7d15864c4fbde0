// The weather agent on Mastra 0.24 (the line that runs on Node 20), traced by
// `@mastra/otel-exporter` 0.3 the way that version's README shows: AI tracing configured
// with a plain `observability: { configs: { otel: { serviceName, exporters: [new
// OtelExporter({ provider: { custom: { endpoint, protocol } } })] } } }` object (no
// `@mastra/observability` package yet), pointed at the recorder's sink. The agent and its
// tools are those of samples/frameworks/mastra; the tools' HTTP and SQL are not traced here.

import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { OtelExporter } from '@mastra/otel-exporter';
import { createRequire } from 'node:module';
import { z } from 'zod';

import * as tools from '../tools.mjs';

const Database = createRequire(import.meta.url)('better-sqlite3');
const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });

const weatherAgent = new Agent({
  id: 'weather-agent',
  name: 'weather-agent',
  instructions: tools.SYSTEM_PROMPT,
  model: openai.chat('gpt-4o-mini'),
  tools: {
    fetch_weather: createTool({
      id: 'fetch_weather',
      description: tools.FETCH_WEATHER_DOC,
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => tools.fetchWeather(city),
    }),
    send_report: createTool({
      id: 'send_report',
      description: tools.SEND_REPORT_DOC,
      inputSchema: z.object({ data: z.string() }),
      execute: async ({ data }) => tools.sendReport(data),
    }),
    save_note: createTool({
      id: 'save_note',
      description: tools.SAVE_NOTE_DOC,
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }) => tools.saveNote(text, Database),
    }),
    ...(tools.SQL_TOOL
      ? {
          run_sql: createTool({
            id: 'run_sql',
            description: tools.RUN_SQL_DOC,
            inputSchema: z.object({ query: z.string() }),
            execute: async ({ query }) => tools.runSql(query, Database),
          }),
        }
      : {}),
  },
});

const mastra = new Mastra({
  agents: { weatherAgent },
  observability: {
    configs: {
      otel: {
        serviceName: tools.SERVICE_NAME,
        exporters: [
          new OtelExporter({
            provider: {
              custom: {
                endpoint: `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`,
                protocol: 'http/protobuf',
              },
            },
          }),
        ],
      },
    },
  },
});

try {
  const result = await mastra.getAgent('weatherAgent').generate(tools.QUESTION, { maxSteps: 6 });
  console.error(result.text);
} finally {
  await mastra.shutdown?.();
}
