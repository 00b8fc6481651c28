/**
 * The sensor wire contract, version 1 (docs/sensors.md): what a sensor sends the collector and
 * how the collector checks it. Shared by both ends — no Fastify, no database.
 *
 * A finding is a CloudEvents 1.0 event (built with the cloudevents SDK) whose `subject` is the
 * correlation_id; its extension attributes carry the idempotency key (`idempotencykey`: CloudEvents
 * attribute names are lower-case letters and digits only, so the spec's idempotency_key is spelled
 * so on the wire), a random nonce and the wire version (`wireversion`). The event's structured
 * JSON form is canonicalized with JCS (RFC 8785, the canonicalize library) and those exact bytes
 * are what travels and what the sensor signs with its Ed25519 key (node:crypto).
 *
 * Security posture: the collector verifies the signature over the bytes it received, before it
 * parses anything (`verifySignature`), then reads the wire version before any other field (a
 * newer version may change the rest), then validates the whole event; the bytes must be the
 * canonical form of what they parse to, so any stored finding can be verified again. Requests
 * that are not findings (heartbeat, configuration pull, re-registration) are signed by the same
 * key over method, path, a timestamp and the body's digest (`requestSigningText`).
 */
import { createHash, createPublicKey, randomBytes, randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CloudEvent } from 'cloudevents';
import canonicalize from 'canonicalize';
import { jsonNestedDeeper } from '../platform/json-depth.ts';
import { UUID_PATTERN } from '../platform/uuid.ts';

/** The wire version this build speaks (N). The collector accepts N and N−1 and refuses N+1. */
export const WIRE_VERSION = 1;
/** Findings in one POST /findings/batch at most. */
export const MAX_BATCH = 100;
/** A finding whose time is further than this from the collector's clock is accepted with an audit warning. */
export const CLOCK_SKEW_MS = 30_000;
/** How long an idempotency_key is remembered. */
export const DEDUPLICATION_MS = 24 * 60 * 60_000;
/** Seconds between heartbeats; a sensor silent for three intervals is stale. */
export const HEARTBEAT_INTERVAL_S = 30;
/** Envelopes per second a sensor replays its spool at unless the collector sets another rate. */
export const DEFAULT_REPLAY_RATE = 100;
/** Largest signed event accepted (bytes of its canonical JSON). */
export const MAX_EVENT_BYTES = 65_536;
/** A signed request (heartbeat, configuration pull) is accepted this far from the collector's clock. */
export const REQUEST_WINDOW_MS = 5 * 60_000;
/** The CloudEvents `type` of a finding. */
export const FINDING_TYPE = 'dev.svc.sensor.finding';

export const SENSOR_CLASSES = ['mcp', 'gateway', 'verification'] as const;
export type SensorClass = (typeof SENSOR_CLASSES)[number];
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Header names of the wire (HTTP headers are case-insensitive; Node gives them lower-cased). */
export const HEADERS = { sensorId: 'x-svc-sensor-id', signature: 'x-svc-signature', timestamp: 'x-svc-timestamp' } as const;

/** Media type of POST /findings: the canonical bytes of one event (CloudEvents structured mode). */
export const FINDING_MEDIA_TYPE = 'application/cloudevents+json';

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const Facts = ['injection', 'network', 'filesystem', 'secret_read', 'egress', 'solicit', 'encoded', 'shell', 'egress_host'] as const;

/** The `data` of a finding event. Fields beyond these are refused (closed objects), except `details`. */
export const FindingDataSchema = Type.Object(
  {
    pillar: Type.Union([Type.Literal('mcp'), Type.Literal('gateway'), Type.Literal('verification'), Type.Literal('apisec')]),
    /** The detector's input kind (prompt, tool_output, llm_output, http, verification, …). */
    kind: Text(64),
    severity: Type.Union(SEVERITIES.map((value) => Type.Literal(value))),
    threat_score: Type.Number({ minimum: 0, maximum: 1 }),
    decision: Type.Union(['allow', 'log', 'alert', 'challenge', 'block'].map((value) => Type.Literal(value))),
    patterns: Type.Array(Type.Object({ id: Text(128), name: Text(256), confidence: Type.Number({ minimum: 0, maximum: 1 }) }, { additionalProperties: false }), { maxItems: 64 }),
    request_id: Text(128),
    session_id: Type.Optional(Type.Union([Text(256), Type.Null()])),
    gateway_id: Type.Optional(Type.Union([Text(128), Type.Null()])),
    /** MCP findings: the server and session the finding belongs to (mcp_sessions). */
    mcp: Type.Optional(
      Type.Object(
        {
          server_id: Type.String({ pattern: UUID_PATTERN }),
          mcp_session_id: Type.Optional(Type.Union([Text(256), Type.Null()])),
          role: Type.Optional(Text(32)),
        },
        { additionalProperties: false },
      ),
    ),
    /** Atomic facts for compound correlation (the MCP chain facts). */
    facts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            fact: Type.Union(Facts.map((value) => Type.Literal(value))),
            finding: Text(128),
            tool: Type.Optional(Text(256)),
            hop: Type.Optional(Text(256)),
            item: Type.Optional(Text(256)),
          },
          { additionalProperties: false },
        ),
        { maxItems: 64 },
      ),
    ),
    /** The sensor could not parse what it inspected: the finding still travels (audit trail intact). */
    parse_error: Type.Optional(Type.Boolean()),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);
export type FindingData = Static<typeof FindingDataSchema>;
const checkData = TypeCompiler.Compile(FindingDataSchema);

/** A finding event as it travels (the structured JSON of the CloudEvent). */
export interface FindingEvent {
  readonly specversion: '1.0';
  readonly id: string;
  readonly source: string;
  readonly type: typeof FINDING_TYPE;
  /** The correlation_id. */
  readonly subject: string;
  readonly time: string;
  readonly datacontenttype: 'application/json';
  readonly idempotencykey: string;
  readonly nonce: string;
  readonly wireversion: number;
  readonly data: FindingData;
}

/** The CloudEvents `source` of a sensor's findings. */
export function sensorSource(sensorId: string): string {
  return `urn:svc:sensor:${sensorId}`;
}

export interface FindingInput {
  readonly sensorId: string;
  /** The subject: what the collector correlates by (the session, else the request). */
  readonly correlationId: string;
  /** Same key for the same finding on every retry and replay (default: a new UUID). */
  readonly idempotencyKey?: string;
  readonly time?: Date;
  readonly data: FindingData;
  /** Test vectors only: fixed id and nonce. */
  readonly id?: string;
  readonly nonce?: string;
  readonly wireVersion?: number;
}

/** Builds a finding event with the cloudevents SDK (which validates the CloudEvents attributes). */
export function buildFinding(input: FindingInput): FindingEvent {
  const event = new CloudEvent<FindingData>({
    specversion: '1.0',
    id: input.id ?? randomUUID(),
    source: sensorSource(input.sensorId),
    type: FINDING_TYPE,
    subject: input.correlationId,
    time: (input.time ?? new Date()).toISOString(),
    datacontenttype: 'application/json',
    idempotencykey: input.idempotencyKey ?? randomUUID(),
    nonce: input.nonce ?? randomBytes(16).toString('base64url'),
    wireversion: input.wireVersion ?? WIRE_VERSION,
    data: input.data,
  });
  return event.toJSON() as unknown as FindingEvent;
}

/** The canonical JSON (RFC 8785) of a value, as UTF-8 bytes. */
export function canonicalBytes(value: unknown): Buffer {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalized');
  return Buffer.from(text, 'utf8');
}

/** What a sensor sends for one finding: the event's canonical bytes and its Ed25519 signature (base64url). */
export function signFinding(event: FindingEvent, privateKey: KeyObject): { body: Buffer; signature: string } {
  const body = canonicalBytes(event);
  return { body, signature: sign(null, body, privateKey).toString('base64url') };
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A sensor's public key (32 raw bytes, base64url) as a key object; null when it is not one. */
export function publicKeyFromText(text: string): KeyObject | null {
  if (text.length !== 43 || !BASE64URL.test(text)) return null;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: text }, format: 'jwk' });
  } catch {
    return null;
  }
}

/** The base64url raw form of an Ed25519 public key. */
export function publicKeyText(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 key');
  return jwk.x;
}

/** Ed25519 verification over exactly these bytes; false for a malformed signature. */
export function verifySignature(bytes: Buffer, signature: string, publicKey: KeyObject): boolean {
  if (signature.length !== 86 || !BASE64URL.test(signature)) return false;
  // Only the canonical text: the last of 86 characters carries 2 bits, and a decoder ignores the
  // other 4, so 16 texts would name one signature, and a request is remembered (replay) by its text.
  const raw = Buffer.from(signature, 'base64url');
  if (raw.toString('base64url') !== signature) return false;
  try {
    return verify(null, bytes, publicKey, raw);
  } catch {
    return false;
  }
}

/** Where a wire version stands against the collector's (N): N and N−1 accepted. */
export function wireVersionStanding(version: unknown, current = WIRE_VERSION): 'accepted' | 'newer' | 'older' | 'invalid' {
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) return 'invalid';
  if (version > current) return 'newer';
  if (version < Math.max(1, current - 1)) return 'older';
  return 'accepted';
}

/** Why a verified body is not a valid finding: the field and the rule (VALIDATION_FAILED details). */
export interface FindingProblem {
  readonly field: string;
  readonly reason: string;
}

/** Parses the verified bytes' JSON (depth-bounded); null when they are not a JSON object. */
export function parseVerified(bytes: Buffer): Record<string, unknown> | null {
  const text = bytes.toString('utf8');
  if (jsonNestedDeeper(text)) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{8,200}$/;
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * Checks a parsed event (after its signature and wire version): canonical bytes, CloudEvents
 * attributes (the SDK's validation), this sensor's source, the finding's data. Returns the event
 * or the first problem.
 */
export function checkFinding(bytes: Buffer, parsed: Record<string, unknown>, sensorId: string): FindingEvent | FindingProblem {
  const canonical = canonicalize(parsed);
  if (canonical === undefined || Buffer.byteLength(canonical, 'utf8') !== bytes.length || !bytes.equals(Buffer.from(canonical, 'utf8'))) {
    return { field: 'body', reason: 'not_canonical' };
  }
  try {
    new CloudEvent(parsed as never, true);
  } catch {
    return { field: 'body', reason: 'not_a_cloudevent' };
  }
  if (parsed.specversion !== '1.0') return { field: 'specversion', reason: 'must_be_1.0' };
  if (parsed.type !== FINDING_TYPE) return { field: 'type', reason: 'unknown_type' };
  if (parsed.source !== sensorSource(sensorId)) return { field: 'source', reason: 'not_this_sensor' };
  if (typeof parsed.subject !== 'string' || parsed.subject.length === 0 || parsed.subject.length > 256) return { field: 'subject', reason: 'required' };
  if (typeof parsed.time !== 'string' || Number.isNaN(Date.parse(parsed.time))) return { field: 'time', reason: 'required' };
  if (parsed.datacontenttype !== 'application/json') return { field: 'datacontenttype', reason: 'must_be_application_json' };
  if (typeof parsed.idempotencykey !== 'string' || !IDEMPOTENCY_KEY.test(parsed.idempotencykey)) return { field: 'idempotencykey', reason: 'pattern' };
  if (typeof parsed.nonce !== 'string' || !NONCE.test(parsed.nonce)) return { field: 'nonce', reason: 'pattern' };
  if (!checkData.Check(parsed.data)) {
    const first = checkData.Errors(parsed.data).First();
    return { field: `data${first?.path.replaceAll('/', '.') ?? ''}`, reason: 'schema' };
  }
  return parsed as unknown as FindingEvent;
}

/** The text a sensor signs for a request that is not a finding (heartbeat, configuration pull, re-registration). */
export function requestSigningText(method: string, path: string, timestamp: string, body: Buffer): Buffer {
  const digest = createHash('sha256').update(body).digest('hex');
  return Buffer.from(`svc-sensor-request-v1\n${method.toUpperCase()}\n${path}\n${timestamp}\n${digest}`, 'utf8');
}

/** Headers of a signed sensor request (what `svc sensor` sends on heartbeat, configuration pull and re-registration). */
export function signRequest(sensorId: string, privateKey: KeyObject, method: string, path: string, body: Buffer, now = Date.now()): Record<string, string> {
  const timestamp = String(now);
  return {
    [HEADERS.sensorId]: sensorId,
    [HEADERS.timestamp]: timestamp,
    [HEADERS.signature]: sign(null, requestSigningText(method, path, timestamp, body), privateKey).toString('base64url'),
  };
}
