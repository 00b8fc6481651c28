/**
 * End to end with real processes: a collector (`svc serve`) and a verification sensor
 * (`svc sensor --class verification`), the sensor enrolled on the collector's API port and then
 * speaking only over the collector's mutual-TLS sensor listener (SENSOR_LISTEN). A verification that fails at the sensor becomes a signed
 * finding the collector verifies, stores and audits; with the collector stopped, the findings made
 * meanwhile wait in the sensor's disk spool and arrive exactly once after it restarts. Embedded
 * (PGlite) by default; on PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';
import { collectorEnvironment, healthy, runSvc, stopProcess as stop, SvcProcesses, SVC_ROOT as root, until } from './processes.ts';

const collectorDir = mkdtempSync(join(tmpdir(), 'svc-e2e-collector-'));
const sensorDir = join(mkdtempSync(join(tmpdir(), 'svc-e2e-sensor-')), 'state');
const baseEnv = collectorEnvironment(collectorDir, 'e2e');
const processes = new SvcProcesses();
const cli = (args: string[]) => runSvc(args, baseEnv);
const start = (args: string[], env: NodeJS.ProcessEnv = {}) => processes.start(args, { ...baseEnv, ...env });


afterAll(async () => {
  await processes.stopAll();
  rmSync(collectorDir, { recursive: true, force: true });
  rmSync(resolve(sensorDir, '..'), { recursive: true, force: true });
});

describe('a collector and a verification sensor as separate processes', { timeout: 600_000 }, () => {
  it('delivers a failed verification as a signed, audited finding, and the findings made while the collector was down exactly once after it returns', async () => {
    const org = cli(['org', 'create', '--name', 'edge', '--json']);
    expect(org.status).toBe(0);
    const auth = { authorization: `Bearer ${org.json.api_key as string}` };

    const collectorPort = await freePort();
    const collectorUrl = `http://127.0.0.1:${collectorPort}`;
    const listenerPort = await freePort();
    const collectorEnv = { PORT: String(collectorPort), SENSOR_LISTEN: `127.0.0.1:${listenerPort}` };
    // On PostgreSQL + Redis the collector runs in its own role (svc serve --role collector).
    const serveArgs = process.env.DATABASE_URL !== undefined && process.env.REDIS_URL !== undefined ? ['serve', '--role', 'collector'] : ['serve'];
    let collector = start(serveArgs, collectorEnv);
    await healthy(collectorUrl);

    const tokenAnswer = await fetch(`${collectorUrl}/api/v1/sensors/enrolment-tokens`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'e2e' }) });
    expect(tokenAnswer.status).toBe(201);
    const { token } = (await tokenAnswer.json()) as { token: string };

    const sensorPort = await freePort();
    const sensorUrl = `http://127.0.0.1:${sensorPort}`;
    const sensorArgs = ['sensor', '--class', 'verification', '--collector', `https://127.0.0.1:${listenerPort}`, '--data-dir', sensorDir, '--listen', `127.0.0.1:${sensorPort}`, '--heartbeat-s', '1'];
    const sensor = start(['sensor', '--class', 'verification', '--collector', `https://127.0.0.1:${listenerPort}`, '--enrolment-url', collectorUrl, '--enrolment-token', token, '--data-dir', sensorDir, '--listen', `127.0.0.1:${sensorPort}`, '--heartbeat-s', '1', '--name', 'verify-edge']);
    await healthy(sensorUrl);
    // The sensor keeps its key, identity and certificate to itself.
    for (const file of ['sensor-key.pem', 'identity.json', 'certificate.pem']) expect(statSync(join(sensorDir, file)).mode & 0o777).toBe(0o600);

    const sensors = (await (await fetch(`${collectorUrl}/api/v1/sensors`, { headers: auth })).json()) as { sensors: Array<{ id: string; class: string; certificate_expires_at: string | null }> };
    expect(sensors.sensors).toHaveLength(1);
    expect(sensors.sensors[0]).toMatchObject({ class: 'verification' });
    expect(Date.parse(sensors.sensors[0]!.certificate_expires_at!)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    const sensorId = sensors.sensors[0]!.id;

    // A response that is not the JSON its schema asks for fails the structural layer.
    const verify = async () => {
      const answer = await fetch(`${sensorUrl}/api/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ response: 'not json at all', schema: { type: 'object' } }) });
      expect(answer.status).toBe(200);
      return (await answer.json()) as { passed: boolean; request_id: string; finding: string };
    };
    const passed = await fetch(`${sensorUrl}/api/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ response: '{"a":1}', schema: { type: 'object' } }) });
    expect(((await passed.json()) as { passed: boolean; finding?: string })).toMatchObject({ passed: true });

    const first = await verify();
    expect(first).toMatchObject({ passed: false, finding: 'sent' });
    const audited = async (requestId: string) => {
      const answer = await fetch(`${collectorUrl}/api/v1/audit?action=sensor.finding&limit=200`, { headers: auth });
      const { records } = (await answer.json()) as { records: Array<{ actor: string; target: string; details: { pillar: string } }> };
      return records.filter((record) => record.target === requestId);
    };
    const threats = async (requestId: string) => ((await (await fetch(`${collectorUrl}/api/v1/threats?request_id=${requestId}`, { headers: auth })).json()) as { data: Array<{ request_id: string; pillar: string }> }).data;
    const firstAudit = await until('the first finding in the audit log', async () => ((await audited(first.request_id)).length > 0 ? audited(first.request_id) : undefined));
    expect(firstAudit).toHaveLength(1);
    expect(firstAudit[0]).toMatchObject({ actor: `sensor:${sensorId}`, details: { pillar: 'verification' } });
    expect(await until('the first threat event', async () => ((await threats(first.request_id)).length > 0 ? threats(first.request_id) : undefined))).toHaveLength(1);

    // The collector goes away; the sensor keeps verifying and spools what it finds.
    await stop(collector);
    const meanwhile = [await verify(), await verify(), await verify()];
    for (const made of meanwhile) expect(made.finding).toBe('spooled');

    collector = start(serveArgs, collectorEnv);
    await healthy(collectorUrl);
    for (const made of meanwhile) await until(`spooled finding ${made.request_id}`, async () => ((await audited(made.request_id)).length > 0 ? true : undefined));
    // A few more heartbeats (and any replay they start) change nothing: each arrived once.
    await new Promise((resolveWait) => setTimeout(resolveWait, 3_000));
    for (const made of [first, ...meanwhile]) {
      expect(await audited(made.request_id)).toHaveLength(1);
      expect(await threats(made.request_id)).toHaveLength(1);
    }
    const after = (await (await fetch(`${collectorUrl}/api/v1/sensors/${sensorId}`, { headers: auth })).json()) as { spool_depth: number | null };
    expect(await until('an empty spool reported', async () => {
      const view = (await (await fetch(`${collectorUrl}/api/v1/sensors/${sensorId}`, { headers: auth })).json()) as { spool_depth: number | null };
      return view.spool_depth === 0 ? view : undefined;
    })).toMatchObject({ spool_depth: 0 });
    expect(after).toBeDefined();

    // Pushed configuration: a paused sensor passes traffic through without inspecting it.
    const paused = await fetch(`${collectorUrl}/api/v1/sensors/${sensorId}/config`, { method: 'PATCH', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ paused: true }) });
    expect(paused.status).toBe(200);
    await until('the pause to reach the sensor', async () => (((await (await fetch(`${sensorUrl}/health`)).json()) as { paused: boolean }).paused ? true : undefined));
    const uninspected = await fetch(`${sensorUrl}/api/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ response: 'not json at all', schema: { type: 'object' } }) });
    expect(await uninspected.json()).toEqual({ passed: true, action: 'none', inspected: false });

    // Restarted without a token, the sensor is the same sensor: its identity is in its data directory.
    await stop(sensor);
    start(sensorArgs);
    await healthy(sensorUrl);
    expect(((await (await fetch(`${sensorUrl}/health`)).json()) as { sensor_id: string }).sensor_id).toBe(sensorId);
    expect(((await (await fetch(`${collectorUrl}/api/v1/sensors`, { headers: auth })).json()) as { sensors: unknown[] }).sensors).toHaveLength(1);
  });

  it('refuses to start without an identity or an enrolment token, naming what is missing', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'sensor', '--class', 'verification', '--collector', 'http://127.0.0.1:1', '--data-dir', join(sensorDir, 'fresh'), '--json'], { cwd: root, env: baseEnv, encoding: 'utf8', timeout: 60_000 });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n').filter((line) => line.startsWith('{'));
    expect(JSON.parse(lines[lines.length - 1]!).error.code).toBe('ENROLMENT_TOKEN_REQUIRED');
  });

  it('refuses a class svc has no sensor for with a usage error that names the three it has', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'sensor', '--class', 'apisec', '--collector', 'http://127.0.0.1:1', '--data-dir', join(sensorDir, 'x'), '--json'], { cwd: root, env: baseEnv, encoding: 'utf8', timeout: 60_000 });
    expect(result.status).toBe(2);
    const lines = result.stderr.trim().split('\n').filter((line) => line.startsWith('{'));
    expect(JSON.parse(lines[lines.length - 1]!).error.code).toBe('USAGE');
  });
});
