/**
 * `svc sensor --class verification|gateway|mcp --collector URL --enrolment-token T --data-dir DIR`: one
 * detector class as its own process (docs/sensors-operations.md, "Running a sensor"). It holds no
 * database or cache connection and needs none of svc's server configuration; everything it keeps
 * is under --data-dir. All three classes (verification, gateway, mcp) are in this build.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { DetectionEngine } from '../../detection/index.ts';
import { loadPiiLexicons } from '../../gateway/index.ts';
import type { LogLevel } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { SensorStartError, startSensorAgent, type SensorAgent } from './agent.ts';
import type { McpSensorContext } from '../collector/mcp-context.ts';
import { buildMcpSensor } from '../mcp-sensor-routes.ts';
import { buildVerificationSensor } from '../verification-sensor-routes.ts';
import { buildGatewaySensor, createGatewayUsage } from '../gateway-sensor-routes.ts';

export const SENSOR_USAGE = 'usage: svc sensor --class verification|gateway|mcp --collector URL --data-dir DIR [--enrolment-token TOKEN] [--enrolment-url URL] [--collector-ca FILE] [--listen HOST:PORT] [--name NAME] [--heartbeat-s N] [--allow-private-targets]';

export class SensorUsageError extends Error {
  constructor(readonly code: 'USAGE', message: string) {
    super(message);
    this.name = 'SensorUsageError';
  }
}

export interface RunningSensor {
  readonly sensorId: string;
  readonly url: string;
  close(): Promise<void>;
}

/** Parses the flags, starts the agent and the class's server; resolves once it listens. */
export async function runSensor(args: readonly string[], version: string): Promise<RunningSensor> {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        class: { type: 'string' },
        collector: { type: 'string' },
        'enrolment-token': { type: 'string' },
        'enrolment-url': { type: 'string' },
        'collector-ca': { type: 'string' },
        'data-dir': { type: 'string' },
        listen: { type: 'string' },
        name: { type: 'string' },
        'heartbeat-s': { type: 'string' },
        'log-level': { type: 'string' },
        'allow-private-targets': { type: 'boolean' },
      },
    }).values as Record<string, string | undefined>;
  } catch (error) {
    throw new SensorUsageError('USAGE', `${(error as Error).message}\n${SENSOR_USAGE}`);
  }
  const sensorClass = values.class;
  if (sensorClass !== 'verification' && sensorClass !== 'gateway' && sensorClass !== 'mcp') throw new SensorUsageError('USAGE', `--class must be verification, gateway or mcp\n${SENSOR_USAGE}`);
  const collectorUrl = values.collector;
  if (collectorUrl === undefined || !/^https?:\/\/[^\s/]+/.test(collectorUrl)) throw new SensorUsageError('USAGE', `--collector must be the collector's http(s) URL\n${SENSOR_USAGE}`);
  const enrolmentUrl = values['enrolment-url'];
  if (enrolmentUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(enrolmentUrl)) throw new SensorUsageError('USAGE', `--enrolment-url must be the collector's API URL (http or https)\n${SENSOR_USAGE}`);
  const dataDir = values['data-dir'];
  if (dataDir === undefined) throw new SensorUsageError('USAGE', `--data-dir is required (the sensor keeps its key, certificate and spool there)\n${SENSOR_USAGE}`);
  const listen = values.listen ?? '127.0.0.1:8788';
  const match = /^(.+):(\d{1,5})$/.exec(listen);
  if (match === null || Number(match[2]) > 65_535) throw new SensorUsageError('USAGE', `--listen must be HOST:PORT\n${SENSOR_USAGE}`);
  const heartbeatS = values['heartbeat-s'] === undefined ? undefined : Number(values['heartbeat-s']);
  if (heartbeatS !== undefined && !(heartbeatS >= 0.1 && heartbeatS <= 3_600)) throw new SensorUsageError('USAGE', `--heartbeat-s must be between 0.1 and 3600\n${SENSOR_USAGE}`);
  const level = (values['log-level'] ?? 'info') as LogLevel;
  if (!['debug', 'info', 'warning', 'error'].includes(level)) throw new SensorUsageError('USAGE', `--log-level must be debug, info, warning or error\n${SENSOR_USAGE}`);

  // Logs go to stderr, as every svc command's do.
  const logger = createLogger(level, pino.destination(2));
  // The gateway class: its usage rides on the heartbeat; each directive's context etag is watched
  // (the sensor is built after the agent: until then the first pull below covers it).
  const usage = sensorClass === 'gateway' ? createGatewayUsage() : null;
  let onDirective: ((directive: Record<string, unknown>) => void) | null = null;
  // The MCP sensor is built first: the agent applies the collector's context to it as it starts.
  const holder: { agent?: SensorAgent } = {};
  const mcp = sensorClass === 'mcp'
    ? buildMcpSensor({
        logger,
        emit: (correlationId, data, emitOptions) => (holder.agent === undefined ? Promise.resolve('dropped' as const) : holder.agent.emit(correlationId, data, emitOptions)),
        paused: () => holder.agent?.config().paused ?? false,
        sensorId: () => holder.agent?.sensorId ?? '',
        allowPrivateTargets: (values['allow-private-targets'] as unknown) === true,
        holdsFile: join(dataDir, 'held-mcp.json'),
      })
    : null;
  const agent = await startSensorAgent({
    collectorUrl,
    dataDir,
    sensorClass,
    name: values.name ?? `${sensorClass}-${hostname()}`.slice(0, 100).replace(/[^A-Za-z0-9 ._:-]/g, '-'),
    version,
    capabilities: sensorClass === 'gateway' ? ['completions', 'screening', 'pii', 'response_filter'] : sensorClass === 'mcp' ? ['mcp-proxy'] : ['verify'],
    ...(values['enrolment-token'] === undefined ? {} : { enrolmentToken: values['enrolment-token'] }),
    ...(enrolmentUrl === undefined ? {} : { enrolmentUrl }),
    ...(values['collector-ca'] === undefined ? {} : { collectorCaFile: values['collector-ca'] }),
    ...(heartbeatS === undefined ? {} : { heartbeatMs: heartbeatS * 1000 }),
    ...(usage === null ? {} : { heartbeatReport: usage.heartbeatReport, onDirective: (directive: Record<string, unknown>) => onDirective?.(directive) }),
    ...(mcp === null ? {} : { classContext: { key: 'mcp', apply: (context: { version: string }) => mcp.apply(context as McpSensorContext) } }),
    logger,
  });
  holder.agent = agent;
  let app;
  let detection: Pick<DetectionEngine, 'warm'> | null = mcp?.detection ?? null;
  if (usage !== null) {
    const sensor = buildGatewaySensor({ agent, logger, usage, allowPrivateTargets: (values['allow-private-targets'] as unknown) === true });
    onDirective = sensor.onDirective;
    await sensor.refresh();
    app = sensor.app;
    detection = sensor.detection;
    // As under `svc serve`: the PII name lexicons are read before the port opens.
    loadPiiLexicons();
  } else {
    app = mcp === null ? buildVerificationSensor({ agent, logger }) : mcp.app;
  }
  // The detection tiers' first-use work, before the port opens (as `svc serve` does): otherwise
  // the first requests a fresh sensor screens queue behind it.
  try {
    if (detection !== null) {
      const warming = performance.now();
      const warmed = await detection.warm();
      logger.info({ kinds: warmed, duration_ms: Math.round(performance.now() - warming) }, 'detection engine warm');
    }
    await app.listen({ host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) });
  } catch (error) {
    await mcp?.close();
    await agent.close();
    throw error;
  }
  const address = app.server.address();
  const url = typeof address === 'object' && address !== null ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : listen;
  logger.info({ sensor_id: agent.sensorId, url, class: sensorClass }, 'sensor listening');
  return {
    sensorId: agent.sensorId,
    url,
    async close() {
      if (mcp === null) await app.close();
      else await mcp.close();
      await agent.close();
    },
  };
}

export { SensorStartError };
