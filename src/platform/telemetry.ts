/**
 * OpenTelemetry traces. Off unless an OTLP endpoint is configured (config.telemetry, from the
 * standard OTEL_* variables): then a tracer provider exports spans in batches with OTLP over HTTP
 * (JSON), W3C trace context is read from incoming requests and written on outgoing ones (the
 * AsyncLocalStorage context manager carries it through awaits), and the spans follow the GenAI
 * semantic conventions where they describe a model call. When off nothing is registered and the
 * instrumented code checks `enabled` before doing any work, so tracing costs nothing.
 *
 * Posture: spans carry no prompt or answer text, no header values and no secrets — names,
 * models, token counts, statuses and ids only.
 */
import { readFileSync } from 'node:fs';
import { context, propagation, ROOT_CONTEXT, trace, type Context, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from './config.ts';

export interface Telemetry {
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** The trace context an incoming request carries (traceparent, tracestate), or the root. */
  extract(headers: Readonly<Record<string, string | string[] | undefined>>): Context;
  /** Writes the active trace context into outgoing headers (traceparent, tracestate). */
  inject(headers: Record<string, string>): void;
  /** Exports what is buffered and stops (server shutdown). */
  close(): Promise<void>;
}

const getter = {
  keys: (carrier: Readonly<Record<string, string | string[] | undefined>>) => Object.keys(carrier),
  get: (carrier: Readonly<Record<string, string | string[] | undefined>>, key: string) => carrier[key],
};

export function createTelemetry(config: Config['telemetry']): Telemetry {
  if (config.tracesEndpoint === null) {
    return { enabled: false, tracer: trace.getTracer('svc'), extract: () => ROOT_CONTEXT, inject: () => undefined, close: async () => undefined };
  }
  const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesEndpoint, headers: { ...config.headers } }), { scheduledDelayMillis: 1_000 })],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const tracer = provider.getTracer('svc', version);
  return {
    enabled: true,
    tracer,
    extract: (headers) => propagation.extract(ROOT_CONTEXT, headers, getter),
    inject: (headers) => propagation.inject(context.active(), headers),
    async close() {
      await provider.forceFlush().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
    },
  };
}
