/**
 * Which upstreams an MCP sensor reaches (src/sensors/mcp-sensor-routes.ts): a server on a private
 * or loopback address of the sensor's network is served only when both the collector's context
 * (its ALLOW_PRIVATE_TARGETS) and the sensor's own --allow-private-targets allow it — the
 * collector's operator does not decide what the sensor's network exposes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_THRESHOLDS } from '../../src/detection/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildMcpSensor } from '../../src/sensors/mcp-sensor-routes.ts';
import type { McpSensorContext } from '../../src/sensors/index.ts';

const logger = createLogger('error');
const KEY = `svc_org_live_abcd1234_${'k'.repeat(40)}`;
const SERVER_ID = randomUUID();

const context = (allowPrivateTargets: boolean): McpSensorContext => ({
  version: `v-${allowPrivateTargets}`,
  org_id: randomUUID(),
  enabled: true,
  allow_private_targets: allowPrivateTargets,
  thresholds: DEFAULT_THRESHOLDS,
  // Cloud metadata: a link-local address of whatever network the sensor runs in.
  servers: [{ id: SERVER_ID, name: 'metadata', url: 'http://169.254.169.254/mcp', transport: 'streamable_http', tool_categories: {}, on_held: 'hide', definitions: [] }],
  keys: [{ key_id: randomUUID(), key_hash: createHash('sha256').update(KEY).digest('hex'), role: 'admin' }],
});

describe('an MCP sensor’s private upstreams', () => {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });

  const served = async (sensorFlag: boolean, collectorSetting: boolean) => {
    const sensor = buildMcpSensor({ logger, emit: async () => 'sent' as const, paused: () => false, sensorId: () => 'sensor-1', allowPrivateTargets: sensorFlag });
    close = () => sensor.close();
    await sensor.apply(context(collectorSetting));
    const health = await sensor.app.inject({ method: 'GET', url: '/health' });
    const call = await sensor.app.inject({ method: 'POST', url: `/mcp/${SERVER_ID}`, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    return { servers: health.json().servers as number, code: call.statusCode === 404 ? (call.json().error.code as string) : null };
  };

  it('leaves out a private upstream the collector allows but the sensor was not started to reach', async () => {
    expect(await served(false, true)).toEqual({ servers: 0, code: 'NOT_FOUND' });
  });

  it('leaves it out when the sensor allows it but the collector does not', async () => {
    expect(await served(true, false)).toEqual({ servers: 0, code: 'NOT_FOUND' });
  });

  it('serves it when both allow private targets', async () => {
    expect((await served(true, true)).servers).toBe(1);
  });
});
