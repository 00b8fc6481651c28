/**
 * A collector outage under load, with real processes (issue #38): a collector (`svc serve`) and a
 * verification sensor (`svc sensor --class verification`, every failing verification one
 * finding). A steady stream of failing verifications runs while the collector is killed and
 * started again on the same database and port: each finding arrives exactly once (audit chain
 * and threat events), those made meanwhile from the sensor's disk spool, replayed no faster than
 * the replay rate an admin pushed. Then the collector is stopped again, findings are spooled, the
 * sensor is killed (SIGKILL) with them on disk and restarted from its data directory without a
 * token: every one arrives once the collector is back. The counts are printed as
 * `[svc fault suite] …` lines. Embedded (PGlite) by default; on PostgreSQL + Redis when
 * DATABASE_URL / REDIS_URL are set (there the collector runs in its own role and is killed with
 * SIGKILL; the embedded database is one process's files, so there it is stopped with SIGTERM).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';
import { collectorEnvironment, filesUnder, healthy, runSvc, stopProcess, SvcProcesses, until } from '../sensors/processes.ts';

const onEngines = process.env.DATABASE_URL !== undefined && process.env.REDIS_URL !== undefined;
const collectorDir = mkdtempSync(join(tmpdir(), 'svc-fault-collector-'));
const sensorDir = join(mkdtempSync(join(tmpdir(), 'svc-fault-sensor-')), 'state');
const baseEnv = collectorEnvironment(collectorDir, 'sensor-outage');
const processes = new SvcProcesses();
const start = (args: string[], env: NodeJS.ProcessEnv = {}) => processes.start(args, { ...baseEnv, ...env });

/** Envelopes per second the admin pushes; the load runs faster, so the spool keeps filling while it drains. */
const REPLAY_RATE = 20;
const LOAD_PER_SECOND = 25;
const LOAD_MS = 10_000;

afterAll(async () => {
  await processes.stopAll();
  rmSync(collectorDir, { recursive: true, force: true });
  rmSync(resolve(sensorDir, '..'), { recursive: true, force: true });
});

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  child.kill(signal);
  await exited;
}

const sleep = (ms: number) => new Promise((resolveWait) => setTimeout(resolveWait, ms));

describe('a verification sensor while its collector is stopped under load', { timeout: 300_000 }, () => {
  it('delivers every finding exactly once, the spooled ones at the pushed replay rate, and loses none spooled when the sensor is killed', async () => {
    const org = runSvc(['org', 'create', '--name', 'sensor-outage', '--json'], baseEnv);
    expect(org.status).toBe(0);
    const auth = { authorization: `Bearer ${org.json.api_key as string}` };
    const json = { ...auth, 'content-type': 'application/json' };

    const collectorPort = await freePort();
    const collectorUrl = `http://127.0.0.1:${collectorPort}`;
    const listenerPort = await freePort();
    const collectorEnv = { PORT: String(collectorPort), SENSOR_LISTEN: `127.0.0.1:${listenerPort}` };
    const serveArgs = onEngines ? ['serve', '--role', 'collector'] : ['serve'];
    const startCollector = async () => {
      const child = start(serveArgs, collectorEnv);
      await healthy(collectorUrl);
      return child;
    };
    const stopCollector = (child: ChildProcess) => (onEngines ? kill(child, 'SIGKILL') : stopProcess(child));
    let collector = await startCollector();

    const tokenAnswer = await fetch(`${collectorUrl}/api/v1/sensors/enrolment-tokens`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'outage' }) });
    expect(tokenAnswer.status).toBe(201);
    const { token } = (await tokenAnswer.json()) as { token: string };
    const sensorPort = await freePort();
    const sensorUrl = `http://127.0.0.1:${sensorPort}`;
    const sensorArgs = ['sensor', '--class', 'verification', '--collector', `https://127.0.0.1:${listenerPort}`, '--data-dir', sensorDir, '--listen', `127.0.0.1:${sensorPort}`, '--heartbeat-s', '1'];
    let sensor = start([...sensorArgs, '--enrolment-url', collectorUrl, '--enrolment-token', token, '--name', 'outage-edge']);
    await healthy(sensorUrl);
    const sensorId = ((await (await fetch(`${sensorUrl}/health`)).json()) as { sensor_id: string }).sensor_id;

    // The admin sets the replay rate; it reaches the sensor with the next heartbeat's answer.
    const pushedAt = Date.now();
    const pushed = await fetch(`${collectorUrl}/api/v1/sensors/${sensorId}/config`, { method: 'PATCH', headers: json, body: JSON.stringify({ replay_rate: REPLAY_RATE }) });
    expect(pushed.status).toBe(200);
    expect(((await pushed.json()) as { config: { replay_rate: number } }).config.replay_rate).toBe(REPLAY_RATE);
    await until('two heartbeats after the push', async () => {
      const view = (await (await fetch(`${collectorUrl}/api/v1/sensors/${sensorId}`, { headers: auth })).json()) as { last_heartbeat_at: string | null };
      return view.last_heartbeat_at !== null && Date.parse(view.last_heartbeat_at) > pushedAt + 1_000 ? true : undefined;
    });

    /** A response that is not the JSON its schema asks for: one failing verification, one finding. */
    const verify = async () => {
      const answer = await fetch(`${sensorUrl}/api/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ response: 'not json at all', schema: { type: 'object' } }) });
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as { passed: boolean; request_id: string; finding: string };
      expect(body.passed).toBe(false);
      return { requestId: body.request_id, finding: body.finding };
    };

    /** Every sensor.finding audit record of the org (paged), and every threat event's request id (paged). */
    const auditRecords = async () => {
      const records: Array<{ target: string; occurred_at: string }> = [];
      let before: number | null = null;
      do {
        const page = (await (await fetch(`${collectorUrl}/api/v1/audit?action=sensor.finding&limit=500${before === null ? '' : `&before=${before}`}`, { headers: auth })).json()) as { records: Array<{ target: string; occurred_at: string }>; next_before: number | null };
        records.push(...page.records);
        before = page.next_before;
      } while (before !== null);
      return records;
    };
    const threatRequestIds = async () => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page = (await (await fetch(`${collectorUrl}/api/v1/threats?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { headers: auth })).json()) as { data: Array<{ request_id: string }>; next_cursor: string | null };
        ids.push(...page.data.map((event) => event.request_id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      return ids;
    };
    const countBy = (ids: readonly string[]) => ids.reduce((counts, id) => counts.set(id, (counts.get(id) ?? 0) + 1), new Map<string, number>());
    /** Waits until `expected` audit records and threat events are stored, then counts each made id in both. */
    const arrivals = async (made: readonly string[], expected: number) => {
      await until(`${expected} audit records`, async () => ((await auditRecords()).length >= expected ? true : undefined), 120_000);
      await until(`${expected} threat events`, async () => ((await threatRequestIds()).length >= expected ? true : undefined), 60_000);
      // A few more heartbeats (and any replay they start) change nothing.
      await sleep(2_000);
      const records = await auditRecords();
      const audited = countBy(records.map((record) => record.target));
      const threats = countBy(await threatRequestIds());
      const missing = made.filter((id) => audited.get(id) !== 1 || threats.get(id) !== 1);
      const duplicates = made.filter((id) => (audited.get(id) ?? 0) > 1 || (threats.get(id) ?? 0) > 1);
      return { records, audited, threats, missing, duplicates };
    };

    // --- Load with the collector killed and started again in the middle -------------------------
    const loadStarted = Date.now();
    const answers: Array<Promise<{ requestId: string; finding: string }>> = [];
    const outage = (async () => {
      await sleep(LOAD_MS * 0.25);
      await stopCollector(collector);
      const stoppedAt = Date.now();
      await sleep(4_000);
      collector = await startCollector();
      return Date.now() - stoppedAt;
    })();
    for (let index = 0; index < (LOAD_PER_SECOND * LOAD_MS) / 1000; index++) {
      const due = loadStarted + (index * 1000) / LOAD_PER_SECOND;
      if (due > Date.now()) await sleep(due - Date.now());
      answers.push(verify());
    }
    const made = await Promise.all(answers);
    const outageMs = await outage;
    const sent = made.filter((finding) => finding.finding === 'sent');
    const spooled = made.filter((finding) => finding.finding === 'spooled');
    expect(sent.length + spooled.length).toBe(made.length);
    expect(new Set(made.map((finding) => finding.requestId)).size).toBe(made.length);
    // The outage lasted seconds at 25 a second: enough spooled for the rate to show.
    expect(spooled.length).toBeGreaterThanOrEqual(3 * REPLAY_RATE);

    const first = await arrivals(made.map((finding) => finding.requestId), made.length);
    expect(first.records).toHaveLength(made.length);
    expect(first.missing).toEqual([]);
    expect(first.duplicates).toEqual([]);

    // The spooled findings' arrival times at the collector (their audit records' occurred_at).
    const spooledIds = new Set(spooled.map((finding) => finding.requestId));
    const arrived = first.records.filter((record) => spooledIds.has(record.target)).map((record) => Date.parse(record.occurred_at)).sort((a, b) => a - b);
    const spanS = (arrived[arrived.length - 1]! - arrived[0]!) / 1000;
    let busiestSecond = 0;
    for (let from = 0, to = 0; from < arrived.length; from++) {
      while (to < arrived.length && arrived[to]! < arrived[from]! + 1_000) to++;
      busiestSecond = Math.max(busiestSecond, to - from);
    }
    // A token bucket of one second's tokens: at most rate × (span + 1) in all, and 2 × rate in any
    // second; one replay batch (≤ rate records) of slack for when the collector stamps them.
    expect(arrived.length).toBeLessThanOrEqual(REPLAY_RATE * (spanS + 1) + REPLAY_RATE);
    expect(busiestSecond).toBeLessThanOrEqual(3 * REPLAY_RATE);
    process.stdout.write(
      `[svc fault suite] sensor outage (${onEngines ? 'PostgreSQL + Redis' : 'embedded'}): collector down ${(outageMs / 1000).toFixed(1)} s under ${LOAD_PER_SECOND}/s; made ${made.length}, answered sent ${sent.length}, spooled ${spooled.length}; ` +
        `found at the collector ${first.audited.size} distinct (audit ${first.records.length}, threat events ${[...first.threats.values()].reduce((a, b) => a + b, 0)}), duplicates ${first.duplicates.length}, missing ${first.missing.length}; ` +
        `spooled replayed over ${spanS.toFixed(1)} s = ${(arrived.length / Math.max(spanS, 0.001)).toFixed(1)}/s (set ${REPLAY_RATE}/s), busiest second ${busiestSecond}\n`,
    );

    // --- Collector stopped again; the sensor killed with findings in its spool ------------------
    await stopCollector(collector);
    const whileDown: string[] = [];
    for (let index = 0; index < 30; index++) {
      const finding = await verify();
      expect(finding.finding).toBe('spooled');
      whileDown.push(finding.requestId);
    }
    const spoolFiles = filesUnder(join(sensorDir, 'spool')).length;
    expect(spoolFiles).toBeGreaterThan(0);
    await kill(sensor, 'SIGKILL');
    sensor = start(sensorArgs);
    await healthy(sensorUrl);
    expect(((await (await fetch(`${sensorUrl}/health`)).json()) as { sensor_id: string }).sensor_id).toBe(sensorId);
    collector = await startCollector();

    const everything = [...made.map((finding) => finding.requestId), ...whileDown];
    const second = await arrivals(everything, everything.length);
    expect(second.records).toHaveLength(everything.length);
    expect(second.missing).toEqual([]);
    expect(second.duplicates).toEqual([]);
    const keptThroughKill = whileDown.filter((id) => second.audited.get(id) === 1 && second.threats.get(id) === 1).length;
    expect(keptThroughKill).toBe(whileDown.length);
    process.stdout.write(
      `[svc fault suite] sensor killed (SIGKILL) with ${whileDown.length} findings spooled, restarted from its data directory without a token: ${keptThroughKill} of ${whileDown.length} arrived exactly once; ` +
        `in all ${everything.length} made, ${second.audited.size} distinct at the collector, duplicates ${second.duplicates.length}, missing ${second.missing.length}\n`,
    );
  });
});
