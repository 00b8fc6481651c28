/**
 * Collector benchmark (issue #38): findings per second one collector accepts — single findings
 * (POST /findings) and batches of 100 (POST /findings/batch) — on PostgreSQL when
 * BENCH_DATABASE_URL (or DATABASE_URL) is a postgres:// URL (and Redis when BENCH_REDIS_URL or
 * REDIS_URL is set), else on the embedded engines; beside it, in the same run, a bare Fastify
 * route that takes the same bodies (baseline). Every finding is distinct, signed before the clock
 * starts, and must be accepted (202 / status accepted), so the figures are of the whole
 * processing order: verify, version, licence, de-duplication, correlation, persistence, audit.
 * Then the cost per finding of verification alone (Ed25519 over the received bytes) and of the
 * whole admission check (verification, parse, canonical form, CloudEvents and schema checks), in
 * this process, and of signing on the sensor side. Prints one JSON line with the load average.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { buildFinding, FINDING_MEDIA_TYPE, publicKeyText, SENSOR_HEADERS, signFinding, verifySignature, WIRE_VERSION, type FindingEvent } from '../src/sensors/index.ts';
import { checkFinding, parseVerified, wireVersionStanding } from '../src/sensors/wire.ts';
import { startChild, type ChildServer } from './lib.ts';

const round = (value: number) => Math.round(value * 10) / 10;

interface Signed {
  body: Buffer;
  signature: string;
}

function sign(sensorId: string, privateKey: Parameters<typeof signFinding>[1], count: number): Signed[] {
  return Array.from({ length: count }, (_, index) => {
    const event = buildFinding({
      sensorId,
      correlationId: `bench-session-${index % 500}`,
      idempotencyKey: `bench-${randomUUID()}`,
      data: { pillar: 'gateway', kind: 'prompt', severity: 'high', threat_score: 0.8, decision: 'alert', patterns: [{ id: 'pi.ignore-previous', name: 'Ignore previous instructions', confidence: 0.9 }], request_id: `req-${index}`, session_id: `bench-session-${index % 500}` },
    });
    return signFinding(event, privateKey);
  });
}

/** Sends every request with `connections` in flight; findings per second over the whole run. */
async function drive(origin: string, requests: Array<{ path: string; body: Buffer; headers: Record<string, string>; findings: number; status: number }>, connections: number): Promise<number> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  let next = 0;
  let findings = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < requests.length) {
        const request = requests[next++]!;
        const response = await pool.request({ path: request.path, method: 'POST', headers: request.headers, body: request.body });
        const text = await response.body.text();
        if (response.statusCode !== request.status) throw new Error(`${request.path}: status ${response.statusCode} ${text.slice(0, 200)}`);
        if (request.path.endsWith('/batch') && (JSON.parse(text) as { accepted: number }).accepted !== request.findings) throw new Error(`batch not wholly accepted: ${text.slice(0, 200)}`);
        findings += request.findings;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return findings / seconds;
}

function singles(sensorId: string, items: readonly Signed[]) {
  return items.map((item) => ({ path: '/findings', body: item.body, headers: { 'content-type': FINDING_MEDIA_TYPE, [SENSOR_HEADERS.sensorId]: sensorId, [SENSOR_HEADERS.signature]: item.signature }, findings: 1, status: 202 }));
}

function batches(sensorId: string, items: readonly Signed[]) {
  const requests = [];
  for (let index = 0; index < items.length; index += 100) {
    const chunk = items.slice(index, index + 100);
    const body = Buffer.from(JSON.stringify({ findings: chunk.map((item) => ({ event: item.body.toString('utf8'), signature: item.signature })) }));
    requests.push({ path: '/findings/batch', body, headers: { 'content-type': 'application/json', [SENSOR_HEADERS.sensorId]: sensorId }, findings: chunk.length, status: 200 });
  }
  return requests;
}

function verificationCost(count: number) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const sensorId = randomUUID();
  let started = performance.now();
  const items = sign(sensorId, privateKey, count);
  const signUs = ((performance.now() - started) * 1000) / count;
  started = performance.now();
  for (const item of items) if (!verifySignature(item.body, item.signature, publicKey)) throw new Error('did not verify');
  const verifyUs = ((performance.now() - started) * 1000) / count;
  started = performance.now();
  for (const item of items) {
    if (!verifySignature(item.body, item.signature, publicKey)) throw new Error('did not verify');
    const parsed = parseVerified(item.body);
    if (parsed === null || wireVersionStanding(parsed.wireversion) !== 'accepted') throw new Error('not a finding');
    const checked = checkFinding(item.body, parsed, sensorId) as FindingEvent | { reason: string };
    if ('reason' in checked) throw new Error(`finding refused: ${checked.reason}`);
  }
  const admitUs = ((performance.now() - started) * 1000) / count;
  return { findings: count, sign_us_per_finding: round(signUs), verify_us_per_finding: round(verifyUs), admission_check_us_per_finding: round(admitUs), bytes_per_finding: Math.round(items.reduce((sum, item) => sum + item.body.length, 0) / count) };
}

export async function runCollectorBench(options: { quick?: boolean } = {}) {
  const database = [process.env.BENCH_DATABASE_URL, process.env.DATABASE_URL].find((url) => url !== undefined && /^postgres(ql)?:\/\//.test(url));
  const redis = [process.env.BENCH_REDIS_URL, process.env.REDIS_URL].find((url) => url !== undefined && /^rediss?:\/\//.test(url));
  const count = options.quick === true ? 1_000 : 5_000;
  const connections = 16;
  let svc: ChildServer | undefined;
  let bare: ChildServer | undefined;
  try {
    svc = await startChild('bench/servers/svc.ts', { ...(database === undefined ? {} : { BENCH_DATABASE_URL: database }), ...(redis === undefined ? {} : { BENCH_REDIS_URL: redis }), BENCH_LOG_LEVEL: 'error' });
    bare = await startChild('bench/servers/bare-findings.ts');
    const origin = `http://127.0.0.1:${svc.port}`;
    const bareOrigin = `http://127.0.0.1:${bare.port}`;
    const admin = { authorization: `Bearer ${String(svc.info.api_key)}`, 'content-type': 'application/json' };

    const token = await fetch(`${origin}/api/v1/sensors/enrolment-tokens`, { method: 'POST', headers: admin, body: '{}' }).then(async (response) => (await response.json()) as { token: string });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const registered = await fetch(`${origin}/sensors/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ enrolment_token: token.token, name: 'bench', class: 'gateway', capabilities: [], version: '0.1.0', wire_version: WIRE_VERSION, public_key: publicKeyText(publicKey) }),
    });
    if (registered.status !== 201) throw new Error(`registration: ${registered.status} ${await registered.text()}`);
    const sensorId = ((await registered.json()) as { sensor_id: string }).sensor_id;

    // Warm-up (not counted), then single and batch runs, each on fresh findings, svc and baseline alternating.
    await drive(origin, singles(sensorId, sign(sensorId, privateKey, 300)), connections);
    await drive(bareOrigin, singles(sensorId, sign(sensorId, privateKey, 300)), connections);
    const singleSvc = await drive(origin, singles(sensorId, sign(sensorId, privateKey, count)), connections);
    const singleBare = await drive(bareOrigin, singles(sensorId, sign(sensorId, privateKey, count)), connections);
    const batchSvc = await drive(origin, batches(sensorId, sign(sensorId, privateKey, count * 4)), 4);
    const batchBare = await drive(bareOrigin, batches(sensorId, sign(sensorId, privateKey, count * 4)), 4);

    return {
      storage: { database: database === undefined ? 'pglite (embedded)' : 'postgresql', cache: redis === undefined ? 'memory' : 'redis' },
      load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
      single: { findings: count, connections, collector_findings_per_s: round(singleSvc), baseline_findings_per_s: round(singleBare) },
      batch_of_100: { findings: count * 4, connections: 4, collector_findings_per_s: round(batchSvc), baseline_findings_per_s: round(batchBare) },
      verification: verificationCost(count),
    };
  } finally {
    await svc?.stop();
    await bare?.stop();
  }
}
