/**
 * The collector's mutual-TLS listener for sensors (SENSOR_LISTEN; docs/sensors-operations.md,
 * "The sensor listener"). A second port beside the API's: TLS 1.3, a client certificate from the
 * sensor CA required, the CA's revocation list applied — an expired, unknown (another CA's) or
 * revoked certificate, or none, is refused in the handshake, before any request is read. Its server
 * certificate is issued by the same CA at start (for SENSOR_TLS_HOSTNAMES, localhost and the
 * loopback addresses), or given by the operator (SENSOR_TLS_CERT_FILE / SENSOR_TLS_KEY_FILE).
 *
 * It serves only the sensor wire (/sensors/*, /findings, /findings/batch, and /health): each
 * request is handed to the same application as the main port's, marked with the sensor id its
 * client certificate was issued for, and the wire routes refuse a request that names another
 * sensor (SENSOR_IDENTITY_MISMATCH). Enrolment, which comes before a certificate, stays on the main
 * port (docs/decisions.md, "Sensor listener: mutual TLS on a second port").
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { TLSSocket } from 'node:tls';
import type { SensorListenerConfig } from '../platform/config.ts';
import { Counter } from 'prom-client';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import { SERVER_CERTIFICATE_LIFETIME_MS, type CertificateAuthority } from './certificates.ts';

const SENSOR_URI_PREFIX = 'urn:svc:sensor:';
const WIRE_PATH = /^\/(?:sensors\/[^?]*|findings|findings\/batch|health)(?:\?.*)?$/;

/** The sensor id of the client certificate a request came with, for requests of the sensor listener. */
const peers = new WeakMap<IncomingMessage, string>();

/**
 * The sensor the client certificate of this request names: a string for requests that came
 * through the mutual-TLS listener, undefined for the main port's.
 */
export function listenerSensorId(raw: IncomingMessage): string | undefined {
  return peers.get(raw);
}

/** The sensor id a sensor certificate names (its URI subject alternative name, else its CN). */
export function certificateSensorId(raw: Buffer): string | null {
  try {
    const certificate = new X509Certificate(raw);
    const uri = (certificate.subjectAltName ?? '').split(', ').find((name) => name.startsWith(`URI:${SENSOR_URI_PREFIX}`));
    if (uri !== undefined) return uri.slice(`URI:${SENSOR_URI_PREFIX}`.length);
    const common = /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject);
    return common?.[1] ?? null;
  } catch {
    return null;
  }
}

export interface SensorListener {
  readonly url: string;
  readonly port: number;
  /** The server certificate's notAfter. */
  readonly serverCertificateExpiresAt: Date;
  /** Handshakes refused since start (no, expired, unknown or revoked client certificate). */
  refusedHandshakes(): number;
  close(): Promise<void>;
}

export interface SensorListenerOptions {
  readonly config: SensorListenerConfig;
  readonly authority: CertificateAuthority;
  /** The application's server: requests are emitted on it, as the main port's are. */
  readonly target: Pick<HttpServer, 'emit'>;
  readonly logger: Logger;
  /** svc_sensor_handshakes_refused_total is counted here when given. */
  readonly metrics?: Metrics;
}

const REFUSED_METRIC = 'svc_sensor_handshakes_refused_total';

function refusedCounter(metrics: Metrics | undefined): Counter | null {
  if (metrics === undefined) return null;
  return (metrics.registry.getSingleMetric(REFUSED_METRIC) as Counter | undefined)
    ?? new Counter({ name: REFUSED_METRIC, help: "TLS handshakes the collector's sensor listener refused (no, expired, unknown or revoked client certificate, or not TLS 1.3).", registers: [metrics.registry] });
}

const isWildcard = (host: string) => host === '0.0.0.0' || host === '::' || host === '';

function notFound(response: ServerResponse): void {
  response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ error: { code: 'ROUTE_NOT_FOUND', message: 'The sensor listener serves the sensor wire only (/sensors/*, /findings, /findings/batch).' } }));
}

/** Opens the listener; resolves once it listens. */
export async function startSensorListener(options: SensorListenerOptions): Promise<SensorListener> {
  const { config, authority, logger } = options;
  // The server certificate: the operator's files (re-read, so a rotated pair is picked up), or
  // one the sensor CA issues, a fresh key held in memory only.
  const serverCertificate = async (): Promise<{ certificatePem: string; keyPem: string; notAfter: Date }> => {
    if (config.certificateFile !== null && config.keyFile !== null) {
      const certificatePem = await readFile(config.certificateFile, 'utf8');
      return { certificatePem, keyPem: await readFile(config.keyFile, 'utf8'), notAfter: new Date(new X509Certificate(certificatePem).validTo) };
    }
    const names = new Set(['localhost', '127.0.0.1', '::1', hostname(), ...config.hostnames]);
    if (!isWildcard(config.host)) names.add(config.host);
    return authority.issueServerCertificate([...names]);
  };
  let server = await serverCertificate();

  const listener: HttpsServer = createServer({ ...(await authority.serverOptions(server)) }, (request, response) => {
    const sensorId = certificateSensorId((request.socket as TLSSocket).getPeerCertificate().raw);
    if (sensorId === null) {
      request.socket.destroy();
      return;
    }
    if (!WIRE_PATH.test(request.url ?? '')) {
      notFound(response);
      return;
    }
    peers.set(request, sensorId);
    options.target.emit('request', request, response);
  });
  let refused = 0;
  const counter = refusedCounter(options.metrics);
  listener.on('tlsClientError', (error) => {
    refused += 1;
    counter?.inc();
    logger.debug({ err: error.message }, 'sensor listener refused a handshake');
  });
  let stopRefresh = await authority.bindServer(listener, server);
  // Renewed a third into its life (10 of 30 days), so a collector that runs for months keeps a valid one.
  const renewal = setInterval(() => {
    void (async () => {
      const next = await serverCertificate();
      stopRefresh();
      stopRefresh = await authority.bindServer(listener, next);
      server = next;
      logger.info({ expires_at: next.notAfter.toISOString() }, 'sensor listener server certificate renewed');
    })().catch((error: unknown) => logger.error({ err: error }, 'sensor listener server certificate not renewed; the current one stays'));
  }, SERVER_CERTIFICATE_LIFETIME_MS / 3);
  renewal.unref();
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(config.port, config.host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const address = listener.address() as AddressInfo;
  const url = `https://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, certificate: config.certificateFile === null ? 'issued by the sensor CA' : config.certificateFile, expires_at: server.notAfter.toISOString() }, 'sensor listener (mutual TLS) listening');
  return {
    url,
    port: address.port,
    get serverCertificateExpiresAt() {
      return server.notAfter;
    },
    refusedHandshakes: () => refused,
    async close() {
      clearInterval(renewal);
      stopRefresh();
      await new Promise<void>((resolve) => {
        listener.close(() => resolve());
        listener.closeAllConnections();
      });
    },
  };
}
