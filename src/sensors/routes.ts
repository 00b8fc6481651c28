/**
 * HTTP surface of the collector (docs/sensors.md).
 *
 * The sensor wire, outside /api/v1 as the spec names it: POST /sensors/register,
 * POST /sensors/heartbeat, POST /findings, POST /findings/batch, GET /sensors/{id}/config. These
 * routes take no API key (a sensor is identified by X-SVC-Sensor-ID and proves it with its
 * Ed25519 signature, or enrols with a one-time token) and read their bodies as raw bytes — a
 * parser registered in their own scope only — so every signature is verified over the bytes
 * received, before anything is parsed.
 *
 * The management API under /api/v1/sensors: enrolment tokens (admin), the sensors and their state
 * (read), pushed configuration and revocation (admin).
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyRequest } from 'fastify';
import { SvcError } from '../platform/errors.ts';
import { auditActor, type RoutesPlugin } from '../platform/http-plugin.ts';
import { jsonNestedDeeper } from '../platform/json-depth.ts';
import { FINDING_MEDIA_TYPE, HEADERS, MAX_BATCH, MAX_EVENT_BYTES, SENSOR_CLASSES, SEVERITIES } from './wire.ts';
import type { Collector } from './collector/collector.ts';
import { listenerSensorId } from './listener.ts';
import type { HeartbeatReport, RegistrationInput } from './collector/store.ts';

export interface SensorRoutesOptions {
  readonly collector: Collector;
  /**
   * True while the mutual-TLS sensor listener runs (SENSOR_LISTEN): the main port then answers
   * only enrolment with a one-time token, and the signed wire SENSOR_MTLS_REQUIRED.
   */
  readonly mtlsOnly?: boolean;
}

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });

const Registration = Type.Object(
  {
    enrolment_token: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$' }),
    class: Type.Union(SENSOR_CLASSES.map((value) => Type.Literal(value))),
    capabilities: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 }),
    version: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9A-Za-z.+-]+$' }),
    wire_version: Type.Integer({ minimum: 0 }),
    public_key: Type.String({ minLength: 43, maxLength: 43, pattern: '^[A-Za-z0-9_-]{43}$' }),
    certificate_request: Type.Optional(Type.String({ minLength: 64, maxLength: 8_192 })),
  },
  { additionalProperties: false },
);

const Count = Type.Integer({ minimum: 0, maximum: 1e12 });
const Heartbeat = Type.Object(
  {
    load: Type.Number({ minimum: 0, maximum: 1e6 }),
    queue_depth: Count,
    last_finding_at: Type.Union([Type.String({ maxLength: 40, pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})$' }), Type.Null()]),
    spool: Type.Optional(
      Type.Object(
        {
          depth: Count,
          bytes: Type.Optional(Count),
          dropped: Type.Optional(Type.Object({ low: Type.Optional(Count), medium: Type.Optional(Count), high: Type.Optional(Count), critical: Type.Optional(Count) }, { additionalProperties: false })),
          replaying: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    /** Gateway sensors: the budget and usage recorded since the last report (gateway-context.ts). */
    gateway_usage: Type.Optional(
      Type.Object(
        {
          budget: Type.Array(Type.Object({ day: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }), tokens: Type.Integer({ minimum: -1e12, maximum: 1e12 }), micro_usd: Type.Integer({ minimum: -1e15, maximum: 1e15 }) }, { additionalProperties: false }), { maxItems: 8 }),
          hours: Type.Array(
            Type.Object(
              {
                hour: Type.String({ maxLength: 40, pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:00:00(\\.000)?Z$' }),
                provider: Type.String({ minLength: 1, maxLength: 64 }),
                model: Type.String({ minLength: 1, maxLength: 256 }),
                requests: Count,
                prompt_tokens: Count,
                completion_tokens: Count,
                cost_usd: Type.Number({ minimum: 0, maximum: 1e9 }),
              },
              { additionalProperties: false },
            ),
            { maxItems: 1_000 },
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Batch = Type.Object(
  {
    findings: Type.Array(
      Type.Object({ event: Type.String({ minLength: 2, maxLength: MAX_EVENT_BYTES }), signature: Type.String({ maxLength: 128 }) }, { additionalProperties: false }),
      { minItems: 1, maxItems: MAX_BATCH },
    ),
  },
  { additionalProperties: false },
);

const checkRegistration = TypeCompiler.Compile(Registration);
const checkHeartbeat = TypeCompiler.Compile(Heartbeat);
const checkBatch = TypeCompiler.Compile(Batch);

/** Parses a verified (or token-bearing) JSON body against a compiled schema; VALIDATION_FAILED / INVALID_JSON otherwise. */
function parseBody<T>(body: Buffer, check: { Check(value: unknown): boolean; Errors(value: unknown): { First(): { path: string } | undefined } }): T {
  const text = body.toString('utf8');
  if (jsonNestedDeeper(text)) throw new SvcError('VALIDATION_FAILED', { details: { field: 'body', reason: 'too_deep' } });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SvcError('INVALID_JSON');
  }
  if (!check.Check(value)) {
    const first = check.Errors(value).First();
    throw new SvcError('VALIDATION_FAILED', { details: { field: `body${first?.path.replaceAll('/', '.') ?? ''}`, reason: 'schema' } });
  }
  return value as T;
}

/** Whether an ISO text of the schema's shape names a real instant (not 30 February, not hour 25). */
const isCalendarTime = (text: string): boolean => {
  const time = Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(text.replace(/Z$/, '').replace(/\.000$/, ''));
};

/** A gateway sensor's usage report names real days and hours (VALIDATION_FAILED, reason date, otherwise). */
function checkUsageDates(usage: Static<typeof Heartbeat>['gateway_usage']): void {
  if (usage === undefined) return;
  usage.budget.forEach((row, index) => {
    if (!isCalendarTime(row.day)) throw new SvcError('VALIDATION_FAILED', { details: { field: `body.gateway_usage.budget.${index}.day`, reason: 'date' } });
  });
  usage.hours.forEach((row, index) => {
    if (!isCalendarTime(row.hour)) throw new SvcError('VALIDATION_FAILED', { details: { field: `body.gateway_usage.hours.${index}.hour`, reason: 'date' } });
  });
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
};

const pathOf = (url: string) => {
  const index = url.indexOf('?');
  return index < 0 ? url : url.slice(0, index);
};

const bodyOf = (request: FastifyRequest): Buffer => (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));

/**
 * A signed request's channel: through the mutual-TLS listener, the sensor it names must be the one
 * its client certificate was issued for; on the main port, it is refused while the listener runs.
 */
function checkChannel(request: FastifyRequest, sensorId: string | undefined, mtlsOnly: boolean): void {
  const peer = listenerSensorId(request.raw);
  if (peer === undefined) {
    if (mtlsOnly) throw new SvcError('SENSOR_MTLS_REQUIRED');
    return;
  }
  if (sensorId !== peer) throw new SvcError('SENSOR_IDENTITY_MISMATCH', { details: { certificate_sensor_id: peer.slice(0, 128) } });
}

/** The wire routes: raw bodies, no API credential. */
const wireRoutes: RoutesPlugin<SensorRoutesOptions> = async (app, { collector, mtlsOnly = false }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', FINDING_MEDIA_TYPE], { parseAs: 'buffer', bodyLimit: MAX_BATCH * MAX_EVENT_BYTES * 2 }, (_request, body, done) => done(null, body));
  const wire = { traffic: true } as const;
  const hidden = { hide: true } as const;

  const signed = (request: FastifyRequest) => {
    checkChannel(request, header(request, HEADERS.sensorId), mtlsOnly);
    return collector.authenticate({
      sensorId: header(request, HEADERS.sensorId),
      signature: header(request, HEADERS.signature),
      timestamp: header(request, HEADERS.timestamp),
      method: request.method,
      path: pathOf(request.url),
      body: bodyOf(request),
    });
  };

  app.post('/sensors/register', { config: wire, schema: hidden }, async (request, reply) => {
    const body = bodyOf(request);
    if (header(request, HEADERS.signature) !== undefined) {
      // An enrolled sensor's boot: the request is signed by its key.
      const sensor = await signed(request);
      const input = parseBody<Static<typeof Registration>>(body, checkRegistration);
      return collector.reregister(sensor, registration(input), input.certificate_request);
    }
    const input = parseBody<Static<typeof Registration>>(body, checkRegistration);
    if (input.enrolment_token === undefined) throw new SvcError('ENROLMENT_TOKEN_INVALID', { message: 'Send enrolment_token (first registration) or sign the request with the enrolled key (X-SVC-Sensor-ID, X-SVC-Timestamp, X-SVC-Signature).' });
    const enrolled = await collector.enrol(input.enrolment_token, registration(input), input.certificate_request);
    reply.status(enrolled.created ? 201 : 200);
    return { ...enrolled.directive, org_id: enrolled.orgId, ...(enrolled.certificate === undefined ? {} : { certificate: enrolled.certificate }) };
  });

  app.post('/sensors/heartbeat', { config: wire, schema: hidden }, async (request) => {
    const sensor = await signed(request);
    const report = parseBody<Static<typeof Heartbeat>>(bodyOf(request), checkHeartbeat);
    checkUsageDates(report.gateway_usage);
    return collector.heartbeat(sensor, report as HeartbeatReport);
  });

  app.get('/sensors/:id/config', { config: wire, schema: { ...hidden, params: Params } }, async (request) => {
    checkChannel(request, request.params.id, mtlsOnly);
    const sensor = await signed(request);
    if (sensor.id !== request.params.id) throw new SvcError('NOT_FOUND', { details: { resource: 'sensor', id: request.params.id } });
    return collector.config(sensor);
  });

  app.post('/findings', { config: wire, schema: hidden, bodyLimit: MAX_EVENT_BYTES }, async (request, reply) => {
    const sensorId = header(request, HEADERS.sensorId);
    if (sensorId === undefined) throw new SvcError('SENSOR_UNKNOWN', { message: 'Send X-SVC-Sensor-ID with the finding.' });
    checkChannel(request, sensorId, mtlsOnly);
    const [result] = await collector.ingest(sensorId, [{ bytes: bodyOf(request), signature: header(request, HEADERS.signature) ?? '' }], sentAt(request));
    if (result === undefined) throw new SvcError('INTERNAL');
    if (result.status === 'rejected') {
      const { code, message, ...details } = result.error;
      throw new SvcError(code, { message, details });
    }
    reply.status(result.status === 'accepted' ? 202 : 200);
    return result;
  });

  app.post('/findings/batch', { config: wire, schema: hidden }, async (request) => {
    const sensorId = header(request, HEADERS.sensorId);
    if (sensorId === undefined) throw new SvcError('SENSOR_UNKNOWN', { message: 'Send X-SVC-Sensor-ID with the batch.' });
    checkChannel(request, sensorId, mtlsOnly);
    const batch = parseBody<Static<typeof Batch>>(bodyOf(request), checkBatch);
    const results = await collector.ingest(sensorId, batch.findings.map((item) => ({ bytes: Buffer.from(item.event, 'utf8'), signature: item.signature })), sentAt(request));
    const count = (status: string) => results.filter((result) => result.status === status).length;
    return { accepted: count('accepted'), duplicate: count('duplicate'), rejected: count('rejected'), results };
  });
};

function sentAt(request: FastifyRequest): { sentAt?: number } {
  const value = Number(header(request, HEADERS.timestamp));
  return Number.isInteger(value) && value > 0 ? { sentAt: value } : {};
}

function registration(input: Static<typeof Registration>): RegistrationInput {
  return { name: input.name, class: input.class, capabilities: input.capabilities, version: input.version, wire_version: input.wire_version, public_key: input.public_key };
}

const TokenBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A note on what the token is for (the sensor names itself on registration).' })),
    expires_in_s: Type.Optional(Type.Integer({ minimum: 60, maximum: 604_800, description: 'Seconds the token stays usable (default 86400, at most 7 days).' })),
  },
  { additionalProperties: false },
);

const ConfigBody = Type.Object(
  {
    muted_patterns: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 1_000, description: 'Pattern ids the sensor reports no finding for.' })),
    severity_threshold: Type.Optional(Type.Union(SEVERITIES.map((value) => Type.Literal(value)), { description: 'Findings below this severity are not sent.' })),
    paused: Type.Optional(Type.Boolean({ description: 'A paused sensor passes traffic through without inspecting it.' })),
    replay_rate: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Envelopes per second the sensor replays its spool at.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

function authOf(request: FastifyRequest): { orgId: string; actor: string } {
  const auth = request.auth;
  if (auth === null) throw new SvcError('AUTH_MISSING');
  return { orgId: auth.orgId, actor: auditActor(auth) };
}

export const sensorRoutes: RoutesPlugin<SensorRoutesOptions> = async (app, options) => {
  const { collector } = options;
  await app.register(wireRoutes, options);

  app.post('/api/v1/sensors/enrolment-tokens', { config: { scope: 'admin' }, schema: { tags: ['sensors'], body: TokenBody } }, async (request, reply) => {
    const { orgId, actor } = authOf(request);
    const created = await collector.createEnrolmentToken(orgId, { name: request.body.name ?? null, expiresInS: request.body.expires_in_s ?? 86_400, actor });
    reply.status(201);
    return created;
  });
  app.get('/api/v1/sensors', { config: { scope: 'read' }, schema: { tags: ['sensors'] } }, async (request) => collector.list(authOf(request).orgId));
  app.get('/api/v1/sensors/:id', { config: { scope: 'read' }, schema: { tags: ['sensors'], params: Params } }, async (request) => collector.get(authOf(request).orgId, request.params.id));
  app.patch('/api/v1/sensors/:id/config', { config: { scope: 'admin' }, schema: { tags: ['sensors'], params: Params, body: ConfigBody } }, async (request) => {
    const { orgId, actor } = authOf(request);
    return collector.setConfig(orgId, request.params.id, request.body, actor);
  });
  app.delete('/api/v1/sensors/:id', { config: { scope: 'admin' }, schema: { tags: ['sensors'], params: Params } }, async (request) => {
    const { orgId, actor } = authOf(request);
    return collector.revoke(orgId, request.params.id, actor);
  });
};
