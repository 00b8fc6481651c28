/**
 * The sensor's side of the wire (docs/sensors.md, docs/sensors-operations.md): what every
 * `svc sensor --class …` process runs beside its detector. It enrols once with a one-time token
 * (keeping its Ed25519 key, certificate and identity in its data directory, mode 0600), registers
 * again on every start (renewing its certificate when due), heartbeats, applies the configuration
 * the collector pushes (pause, muted patterns, severity threshold, replay rate), and emits each
 * finding as a signed CloudEvent. A finding the collector cannot take now (no answer, 429, 503)
 * goes to the disk spool (spool.ts) and is replayed, oldest first, at the pushed replay rate once
 * a heartbeat succeeds again; while anything is spooled, new findings queue behind it so they
 * arrive in order. Delivery is at least once; the collector de-duplicates by idempotency key.
 *
 * Security posture: the private key never leaves the data directory (0700, files 0600) and is
 * never logged; the enrolment token is used once and not stored.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../platform/logger.ts';
import { createCertificateRequest, generateSensorKey, renewalDue, writeFileAtomic } from '../certificates.ts';
import { DEFAULT_SENSOR_CONFIG, type SensorConfig } from '../collector/store.ts';
import { sensorOpener } from '../sealing.ts';
import { createReplayer, openSpool, type ReplayOutcome, type Spool, type SpooledRecord } from '../spool.ts';
import { createCollectorTransport, readOptional } from './transport.ts';
import { buildFinding, HEADERS, FINDING_MEDIA_TYPE, publicKeyText, SEVERITIES, signFinding, signRequest, WIRE_VERSION, type FindingData, type SensorClass } from '../wire.ts';

export interface SensorAgentOptions {
  readonly collectorUrl: string;
  readonly dataDir: string;
  readonly sensorClass: SensorClass;
  readonly name: string;
  readonly version: string;
  readonly capabilities: readonly string[];
  /** Needed on the first start only (no identity in dataDir yet). */
  readonly enrolmentToken?: string;
  /**
   * Where enrolment goes when it is not the collector URL: the collector's API port, when
   * collectorUrl is its mutual-TLS sensor listener (https), which needs a certificate first.
   */
  readonly enrolmentUrl?: string;
  /** A CA certificate file to trust for an https collector instead of the sensor CA pinned at enrolment. */
  readonly collectorCaFile?: string;
  /** Heartbeat interval (the collector's heartbeat_interval_s unless set; tests shorten it). */
  readonly heartbeatMs?: number;
  readonly logger: Logger;
  /** A class's own part of every directive (the gateway context's etag): told each one the collector answers. */
  readonly onDirective?: (directive: Record<string, unknown>) => void;
  /**
   * A class's own part of the heartbeat report (the gateway sensor's usage): `take` gives what to
   * add (null: nothing), `settled` is told whether the collector took it (else it is kept for the next).
   */
  readonly heartbeatReport?: { take(): Record<string, unknown> | null; settled(taken: Record<string, unknown>, delivered: boolean): void };
  /**
   * A class-specific context the collector sends beside the configuration (the MCP sensor's
   * servers, definitions and key hashes: collector/mcp-context.ts), under `key` in the directive
   * with a `version`; heartbeats carry only `<key>_context_version`, and the agent pulls
   * GET /sensors/{id}/config when it differs from the one applied. The last one applied is kept in
   * the data directory (0600), so a sensor restarted while the collector is away serves from it.
   */
  readonly classContext?: { readonly key: string; apply(context: { readonly version: string }): Promise<void> };
}

interface Identity {
  readonly sensor_id: string;
  readonly org_id: string | null;
  readonly collector_url: string;
}

export interface SensorAgent {
  readonly sensorId: string;
  /** The configuration in force (pushed by the collector). */
  config(): SensorConfig;
  /**
   * Emits one finding: dropped when muted or below the threshold (unless `unfiltered`: an event
   * for the org's webhooks, not a detection); sent, or spooled.
   */
  emit(correlationId: string, data: FindingData, options?: { readonly idempotencyKey?: string; readonly unfiltered?: boolean }): Promise<'sent' | 'duplicate' | 'spooled' | 'dropped' | 'filtered' | 'rejected'>;
  /** One heartbeat now (and a replay when it succeeds and the spool holds findings). */
  heartbeat(): Promise<boolean>;
  /** GET /sensors/{id}/config, signed: the directive with the class's full context; null when the collector cannot be reached or refuses. */
  pullConfig(): Promise<Record<string, unknown> | null>;
  /** Opens a box the collector sealed to this sensor's key (sealing.ts); throws when it is not this sensor's. */
  open(sealed: string): Buffer;
  close(): Promise<void>;
}

export class SensorStartError extends Error {
  constructor(readonly code: 'ENROLMENT_TOKEN_REQUIRED' | 'ENROLMENT_FAILED' | 'COLLECTOR_UNREACHABLE', message: string) {
    super(message);
    this.name = 'SensorStartError';
  }
}

const REQUEST_TIMEOUT_MS = 10_000;

/** Starts a sensor agent: key, enrolment or registration, spool, heartbeats. */
export async function startSensorAgent(options: SensorAgentOptions): Promise<SensorAgent> {
  const { logger } = options;
  const base = options.collectorUrl.replace(/\/+$/, '');
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  await chmod(options.dataDir, 0o700);
  const keyPath = join(options.dataDir, 'sensor-key.pem');
  const identityPath = join(options.dataDir, 'identity.json');
  const certificatePath = join(options.dataDir, 'certificate.pem');
  const caPath = join(options.dataDir, 'ca-certificate.pem');

  let keyPem = await readOptional(keyPath);
  if (keyPem === null) {
    keyPem = generateSensorKey().privateKeyPem;
    await writeFileAtomic(keyPath, keyPem);
  }
  const privateKey: KeyObject = createPrivateKey(keyPem);
  const publicKey = publicKeyText(createPublicKey(privateKey));
  const registration = { name: options.name, class: options.sensorClass, capabilities: [...options.capabilities], version: options.version, wire_version: WIRE_VERSION, public_key: publicKey };

  let config: SensorConfig = DEFAULT_SENSOR_CONFIG;
  let configVersion = -1;
  let heartbeatMs = options.heartbeatMs ?? 30_000;
  let lastFindingAt: string | null = null;

  // Mutual TLS when the collector URL is https (transport.ts); the certificate is renewed when due.
  const transport = await createCollectorTransport({
    collectorUrl: base, privateKeyPem: keyPem, certificatePath, caPath, timeoutMs: REQUEST_TIMEOUT_MS,
    ...(options.enrolmentUrl === undefined ? {} : { enrolmentUrl: options.enrolmentUrl }),
    ...(options.collectorCaFile === undefined ? {} : { collectorCaFile: options.collectorCaFile }),
  });
  const post = (path: string, body: Buffer, headers: Record<string, string>) => transport.post(path, body, headers);
  let certificatePem = await readOptional(certificatePath);

  async function saveCertificate(answer: { certificate?: { certificate_pem: string; ca_certificate_pem: string } }): Promise<void> {
    if (answer.certificate === undefined) return;
    await writeFileAtomic(certificatePath, answer.certificate.certificate_pem);
    await writeFileAtomic(caPath, answer.certificate.ca_certificate_pem);
    certificatePem = answer.certificate.certificate_pem;
    await transport.reload();
  }

  const contextPath = options.classContext === undefined ? null : join(options.dataDir, `context-${options.classContext.key}.json`);
  let contextVersion: string | null = null;
  let contextPull: Promise<void> | null = null;
  async function applyContext(context: { version: string }, persist: boolean): Promise<void> {
    if (options.classContext === undefined || context.version === contextVersion) return;
    await options.classContext.apply(context);
    contextVersion = context.version;
    if (persist && contextPath !== null) await writeFileAtomic(contextPath, JSON.stringify(context));
  }
  /** The class context of a directive: applied when it came whole, pulled when only its version moved. */
  async function directiveContext(answer: Record<string, unknown>): Promise<void> {
    if (options.classContext === undefined) return;
    const key = options.classContext.key;
    const whole = answer[key] as { version?: unknown } | undefined;
    if (whole !== undefined && whole !== null && typeof whole.version === 'string') return applyContext(whole as { version: string }, true);
    const version = answer[`${key}_context_version`];
    if (typeof version !== 'string' || version === contextVersion) return;
    contextPull ??= (async () => {
      try {
        const path = `/sensors/${encodeURIComponent(identity.sensor_id)}/config`;
        const response = await transport.get(path, signRequest(identity.sensor_id, privateKey, 'GET', path, Buffer.alloc(0)));
        if (!response.ok) {
          logger.warn({ status: response.status }, 'sensor context pull refused');
          return;
        }
        const pulled = (await response.json()) as Record<string, unknown>;
        const context = pulled[key] as { version?: unknown } | undefined;
        if (context !== undefined && context !== null && typeof context.version === 'string') await applyContext(context as { version: string }, true);
      } catch (error) {
        logger.warn({ err: (error as Error).message }, 'sensor context pull failed; serving from the last one');
      } finally {
        contextPull = null;
      }
    })();
    await contextPull;
  }

  async function applyDirective(answer: { config?: SensorConfig; config_version?: number; heartbeat_interval_s?: number }): Promise<void> {
    options.onDirective?.(answer as Record<string, unknown>);
    await directiveContext(answer as Record<string, unknown>);
    if (answer.config !== undefined && answer.config_version !== undefined && answer.config_version !== configVersion) {
      config = { ...DEFAULT_SENSOR_CONFIG, ...answer.config };
      configVersion = answer.config_version;
      replayer.setRate(config.replay_rate);
      logger.info({ config, config_version: configVersion }, 'sensor configuration applied');
    }
    if (options.heartbeatMs === undefined && answer.heartbeat_interval_s !== undefined) heartbeatMs = answer.heartbeat_interval_s * 1000;
  }

  // Identity: enrol once, then register (signed) on every start.
  const identityText = await readOptional(identityPath);
  let identity: Identity;
  let pendingDirective: Parameters<typeof applyDirective>[0] | null = null;
  if (identityText === null) {
    if (options.enrolmentToken === undefined) throw new SensorStartError('ENROLMENT_TOKEN_REQUIRED', `No sensor identity in ${options.dataDir}: pass --enrolment-token (an org admin creates one with POST /api/v1/sensors/enrolment-tokens).`);
    const body = Buffer.from(JSON.stringify({ enrolment_token: options.enrolmentToken, ...registration, certificate_request: await createCertificateRequest(keyPem) }));
    let answer: Awaited<ReturnType<typeof post>>;
    try {
      answer = await transport.post('/sensors/register', body, {}, { enrolment: true });
    } catch (error) {
      const hint = transport.mutualTls && options.enrolmentUrl === undefined ? ' (an https collector URL is its mutual-TLS sensor listener, which needs a certificate: pass --enrolment-url with the collector\'s API URL)' : '';
      throw new SensorStartError('COLLECTOR_UNREACHABLE', `The collector at ${options.enrolmentUrl ?? base} cannot be reached to enrol: ${(error as Error).message}${hint}`);
    }
    const json = (await answer.json().catch(() => ({}))) as Record<string, unknown> & { error?: { code?: string; message?: string } };
    if (answer.status !== 201 && answer.status !== 200) throw new SensorStartError('ENROLMENT_FAILED', `Enrolment refused (${answer.status} ${json.error?.code ?? ''}): ${json.error?.message ?? ''}`);
    identity = { sensor_id: String(json.sensor_id), org_id: typeof json.org_id === 'string' ? json.org_id : null, collector_url: base };
    await saveCertificate(json as { certificate?: { certificate_pem: string; ca_certificate_pem: string } });
    await writeFileAtomic(identityPath, JSON.stringify(identity, null, 1));
    pendingDirective = json as Parameters<typeof applyDirective>[0];
    logger.info({ sensor_id: identity.sensor_id }, 'sensor enrolled');
  } else {
    identity = JSON.parse(identityText) as Identity;
  }
  const sensorId = identity.sensor_id;

  const spool: Spool = await openSpool({ dir: join(options.dataDir, 'spool') });
  const replayer = createReplayer(spool);
  if (pendingDirective !== null) await applyDirective(pendingDirective);

  const signedPost = async (path: string, payload: unknown) => {
    const body = Buffer.from(JSON.stringify(payload));
    return post(path, body, signRequest(sensorId, privateKey, 'POST', path, body));
  };

  if (identityText !== null) {
    // A restart: register again (version, capabilities), renewing the certificate when due. The
    // collector may be away; the sensor runs anyway and spools until it is back.
    try {
      const renew = certificatePem === null || renewalDue(certificatePem);
      const answer = await signedPost('/sensors/register', { ...registration, ...(renew ? { certificate_request: await createCertificateRequest(keyPem) } : {}) });
      if (answer.ok) {
        const json = (await answer.json()) as Parameters<typeof applyDirective>[0] & { certificate?: { certificate_pem: string; ca_certificate_pem: string } };
        await saveCertificate(json);
        await applyDirective(json);
      } else {
        logger.warn({ status: answer.status }, 'sensor registration refused; running with the last configuration');
      }
    } catch (error) {
      logger.warn({ err: error }, 'collector unreachable at start; findings are spooled until it is back');
    }
  }

  if (contextVersion === null && contextPath !== null) {
    // Not configured by the collector at this start (it is away): the last context applied, if any.
    const saved = await readOptional(contextPath);
    if (saved !== null) {
      try {
        await applyContext(JSON.parse(saved) as { version: string }, false);
        logger.warn({ version: contextVersion }, 'serving from the last configuration the collector sent');
      } catch (error) {
        logger.error({ err: (error as Error).message }, 'the saved sensor context could not be applied');
      }
    }
  }

  // --- delivery ------------------------------------------------------------------------------
  let replaying: Promise<void> | null = null;
  const spoolingNow = () => spool.stats().depth > 0 || replaying !== null;

  async function sendBatch(records: readonly SpooledRecord[]): Promise<ReplayOutcome[]> {
    const findings = records.map((record) => JSON.parse(Buffer.from(record.envelope).toString('utf8')) as { event: string; signature: string });
    const body = Buffer.from(JSON.stringify({ findings }));
    const answer = await post('/findings/batch', body, { [HEADERS.sensorId]: sensorId, [HEADERS.timestamp]: String(Date.now()) });
    if (answer.status === 429 || answer.status >= 500) throw new Error(`collector answered ${answer.status}`);
    if (!answer.ok) {
      logger.error({ status: answer.status }, 'collector refused a replay batch');
      throw new Error(`collector answered ${answer.status}`);
    }
    const json = (await answer.json()) as { results: Array<{ status: string; error?: { code: string } }> };
    return json.results.map((result) => {
      if (result.status === 'accepted' || result.status === 'duplicate') return 'delivered';
      if (result.error?.code === 'SERVICE_UNAVAILABLE') return 'retry';
      return 'rejected';
    });
  }

  function replay(): Promise<void> {
    replaying ??= (async () => {
      try {
        const result = await replayer.run(sendBatch);
        logger.info({ ...result, rate: replayer.rate }, 'spool replay ended');
      } catch (error) {
        logger.warn({ err: error }, 'spool replay failed');
      } finally {
        replaying = null;
      }
    })();
    return replaying;
  }

  async function emit(correlationId: string, data: FindingData, emitOptions: { readonly idempotencyKey?: string; readonly unfiltered?: boolean } = {}): ReturnType<SensorAgent['emit']> {
    if (emitOptions.unfiltered !== true && SEVERITIES.indexOf(data.severity) < SEVERITIES.indexOf(config.severity_threshold)) return 'filtered';
    const patterns = data.patterns.filter((pattern) => !config.muted_patterns.includes(pattern.id));
    if (data.patterns.length > 0 && patterns.length === 0) return 'filtered';
    const event = buildFinding({ sensorId, correlationId, data: { ...data, patterns }, ...(emitOptions.idempotencyKey === undefined ? {} : { idempotencyKey: emitOptions.idempotencyKey }) });
    const signed = signFinding(event, privateKey);
    lastFindingAt = new Date().toISOString();
    const envelope = Buffer.from(JSON.stringify({ event: signed.body.toString('utf8'), signature: signed.signature }));
    const toSpool = async () => (await spool.append({ idempotencyKey: event.idempotencykey, severity: data.severity, createdAt: Date.now(), envelope })) === 'spooled' ? 'spooled' as const : 'dropped' as const;
    // Behind anything already spooled, so findings arrive in the order they were made.
    if (spoolingNow()) return toSpool();
    let answer: Awaited<ReturnType<typeof post>>;
    try {
      answer = await post('/findings', signed.body, { 'content-type': FINDING_MEDIA_TYPE, [HEADERS.sensorId]: sensorId, [HEADERS.signature]: signed.signature, [HEADERS.timestamp]: String(Date.now()) });
    } catch {
      return toSpool();
    }
    if (answer.status === 202) return 'sent';
    if (answer.status === 200) return 'duplicate';
    if (answer.status === 429 || answer.status >= 500) return toSpool();
    logger.error({ status: answer.status, body: (await answer.text()).slice(0, 500) }, 'collector refused a finding');
    return 'rejected';
  }

  async function heartbeat(): Promise<boolean> {
    const stats = spool.stats();
    const report = spool.dropReport();
    const dropped = { low: 0, medium: 0, high: 0, critical: 0 };
    for (const counts of Object.values(report)) for (const severity of SEVERITIES) dropped[severity] += counts[severity];
    const extra = options.heartbeatReport?.take() ?? null;
    let delivered = false;
    try {
      const answer = await signedPost('/sensors/heartbeat', {
        load: Math.round((loadavg()[0] ?? 0) * 100) / 100,
        queue_depth: stats.depth,
        last_finding_at: lastFindingAt,
        spool: { depth: stats.depth, bytes: stats.bytes, dropped, replaying: replaying !== null },
        ...extra,
      });
      if (!answer.ok) {
        logger.warn({ status: answer.status }, 'heartbeat refused');
        return false;
      }
      delivered = true;
      await applyDirective((await answer.json()) as Parameters<typeof applyDirective>[0]);
      await spool.markReported(report);
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'heartbeat failed: collector unreachable');
      return false;
    } finally {
      if (extra !== null) options.heartbeatReport?.settled(extra, delivered);
    }
    if (spool.stats().depth > 0) void replay();
    if (certificatePem !== null && renewalDue(certificatePem)) await renewCertificate();
    return true;
  }

  /** A new 24-hour certificate for the same key, through a signed registration, before the current one expires. */
  async function renewCertificate(): Promise<void> {
    try {
      const answer = await signedPost('/sensors/register', { ...registration, certificate_request: await createCertificateRequest(keyPem!) });
      if (!answer.ok) {
        logger.warn({ status: answer.status }, 'certificate renewal refused; retried at the next heartbeat');
        return;
      }
      const json = (await answer.json()) as Parameters<typeof applyDirective>[0] & { certificate?: { certificate_pem: string; ca_certificate_pem: string; expires_at?: string } };
      await saveCertificate(json);
      await applyDirective(json);
      logger.info({ expires_at: json.certificate?.expires_at }, 'sensor certificate renewed');
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'certificate renewal failed; retried at the next heartbeat');
    }
  }

  const opener = await sensorOpener(privateKey);
  async function pullConfig(): Promise<Record<string, unknown> | null> {
    const path = `/sensors/${sensorId}/config`;
    try {
      const answer = await transport.get(path, signRequest(sensorId, privateKey, 'GET', path, Buffer.alloc(0)));
      if (!answer.ok) {
        logger.warn({ status: answer.status }, 'configuration pull refused');
        return null;
      }
      return (await answer.json()) as Record<string, unknown>;
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'configuration pull failed: collector unreachable');
      return null;
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => void heartbeat().finally(schedule), heartbeatMs);
  };
  await heartbeat();
  schedule();

  return {
    sensorId,
    config: () => config,
    emit,
    heartbeat,
    pullConfig,
    open: opener,
    async close() {
      closed = true;
      clearTimeout(timer);
      replayer.stop();
      await replaying;
      await spool.close();
      await transport.close();
    },
  };
}
