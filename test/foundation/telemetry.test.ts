/**
 * OpenTelemetry: with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, a streamed completion produces a
 * `chat {model}` span with the GenAI semantic-convention attributes inside the request's server
 * span, continuing the caller's W3C traceparent and passing it on to the upstream provider; the
 * spans arrive at an OTLP/HTTP receiver (a local server speaking the protocol's JSON encoding).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values: Array<{ stringValue?: string }> } };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
}

const received: Array<{ contentType: string | undefined; spans: OtlpSpan[]; service: string | undefined }> = [];
let receiver: Server;
let openai: FakeProvider;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource: { attributes: OtlpAttribute[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const resourceSpans of body.resourceSpans) {
        received.push({
          contentType: request.headers['content-type'],
          service: resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue,
          spans: resourceSpans.scopeSpans.flatMap((scope) => scope.spans),
        });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  openai = await startFakeProvider('openai');
});

afterAll(async () => {
  await openai?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  if (value === undefined) return undefined;
  if (value.arrayValue !== undefined) return value.arrayValue.values.map((item) => item.stringValue);
  return value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.doubleValue ?? value.boolValue;
};

describe('OpenTelemetry traces', () => {
  it('exports a streamed completion as a chat span with GenAI attributes, in the caller\'s trace, and passes the trace on upstream', async () => {
    const port = (receiver.address() as AddressInfo).port;
    const context: TestContext = await createTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'svc-under-test' } });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    try {
      const { orgId, apiKey } = await context.createOrg();
      await context.services.accounts.providerKeys.set(orgId, 'openai', FAKE_CREDENTIALS.default, openai.baseUrl);
      openai.reset();
      const answer = await context.app.inject({
        method: 'POST',
        url: '/api/v1/gateway/completions',
        headers: { authorization: `Bearer ${apiKey}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        payload: { provider: 'openai', model: 'gpt-4o-mini', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello in three words.' }] },
      });
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain('data: [DONE]');
      // The upstream got the trace: same trace id, a span of svc's as parent.
      expect(openai.requests[0]?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    } finally {
      await context.close(); // flushes the batch
    }
    const spans = received.flatMap((batch) => batch.spans);
    expect(received[0]?.contentType).toMatch(/^application\/json/);
    expect(received[0]?.service).toBe('svc-under-test');
    const chat = spans.find((span) => span.name === 'chat gpt-4o-mini');
    expect(chat).toBeDefined();
    expect(chat!.traceId).toBe(traceId);
    expect(chat!.kind).toBe(3); // CLIENT
    expect(attribute(chat!, 'gen_ai.operation.name')).toBe('chat');
    expect(attribute(chat!, 'gen_ai.system')).toBe('openai');
    expect(attribute(chat!, 'gen_ai.request.model')).toBe('gpt-4o-mini');
    expect(attribute(chat!, 'gen_ai.request.max_tokens')).toBe(64);
    expect(attribute(chat!, 'gen_ai.response.model')).toEqual(expect.any(String));
    expect(attribute(chat!, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
    expect(attribute(chat!, 'gen_ai.usage.input_tokens')).toBeGreaterThan(0);
    expect(attribute(chat!, 'gen_ai.usage.output_tokens')).toBeGreaterThan(0);
    // Inside the request's server span, which continues the caller's span.
    const server = spans.find((span) => span.spanId === chat!.parentSpanId);
    expect(server?.name).toBe('POST /api/v1/gateway/completions');
    expect(server?.parentSpanId).toBe('00f067aa0ba902b7');
    expect(attribute(server!, 'http.response.status_code')).toBe(200);
    // No content in the spans.
    expect(JSON.stringify(spans)).not.toContain('Say hello');
  });

  it('is off without an endpoint: no request carries a span and nothing is exported', async () => {
    const before = received.length;
    const context = await createTestApp();
    try {
      expect(context.services.telemetry.enabled).toBe(false);
      const { orgId, apiKey } = await context.createOrg();
      await context.services.accounts.providerKeys.set(orgId, 'openai', FAKE_CREDENTIALS.default, openai.baseUrl);
      openai.reset();
      await context.app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: { authorization: `Bearer ${apiKey}`, traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, payload: { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] } });
      expect(openai.requests[0]?.headers.traceparent).toBeUndefined();
    } finally {
      await context.close();
    }
    expect(received.length).toBe(before);
  });
});
