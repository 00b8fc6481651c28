/**
 * How a sensor reaches its collector (docs/sensors-operations.md, "The sensor listener"). With an
 * https collector URL every request goes over mutual TLS: the sensor presents its key and its
 * 24-hour certificate and trusts only the collector's CA — the sensor CA the enrolment answer
 * carried (pinned in the data directory), or the operator's (--collector-ca) when the collector's
 * server certificate comes from another authority. After a renewal the connections are rebuilt
 * with the new certificate; requests in flight finish on the old ones. With an http URL (an
 * all-in-one svc without SENSOR_LISTEN) requests are plain HTTP, signed as ever.
 *
 * Enrolment comes before any certificate, so it goes to the enrolment URL (the collector's main
 * port; by default the collector URL itself).
 */
import { readFile } from 'node:fs/promises';
import { Agent, fetch, type Response } from 'undici';

export interface CollectorTransportOptions {
  readonly collectorUrl: string;
  /** Where enrolment goes (the collector's API port); default collectorUrl. */
  readonly enrolmentUrl?: string;
  /** A CA certificate file (PEM) to trust for the collector instead of the pinned sensor CA. */
  readonly collectorCaFile?: string;
  readonly privateKeyPem: string;
  readonly certificatePath: string;
  readonly caPath: string;
  readonly timeoutMs: number;
}

export interface CollectorTransport {
  /** True when the collector is reached over mutual TLS. */
  readonly mutualTls: boolean;
  post(path: string, body: Buffer, headers: Record<string, string>, options?: { enrolment?: boolean }): Promise<Response>;
  /** A signed GET on the collector (the configuration pull), over mutual TLS when it is https. */
  get(path: string, headers: Record<string, string>): Promise<Response>;
  /** Re-reads the certificate and the pinned CA (after enrolment or a renewal). */
  reload(): Promise<void>;
  close(): Promise<void>;
}

/** A file's text, or null when it does not exist (the sensor's data directory before enrolment). */
export async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export async function createCollectorTransport(options: CollectorTransportOptions): Promise<CollectorTransport> {
  const base = options.collectorUrl.replace(/\/+$/, '');
  const enrolmentBase = (options.enrolmentUrl ?? options.collectorUrl).replace(/\/+$/, '');
  const mutualTls = base.startsWith('https:');
  const operatorCa = options.collectorCaFile === undefined ? null : await readFile(options.collectorCaFile, 'utf8');
  const enrolmentAgent = operatorCa === null ? undefined : new Agent({ connect: { ca: [operatorCa] } });
  let agent: Agent | undefined;

  async function reload(): Promise<void> {
    if (!mutualTls) return;
    const [certificate, pinned] = await Promise.all([readOptional(options.certificatePath), readOptional(options.caPath)]);
    const ca = operatorCa ?? pinned;
    const previous = agent;
    // No certificate yet (not enrolled) or no CA to trust: requests fail and findings are spooled.
    agent = certificate === null || ca === null ? undefined : new Agent({ connect: { ca: [ca], cert: certificate, key: options.privateKeyPem, minVersion: 'TLSv1.3' } });
    // Requests in flight finish on the old connections.
    if (previous !== undefined) void previous.close().catch(() => undefined);
  }
  await reload();

  return {
    mutualTls,
    async post(path, body, headers, postOptions = {}) {
      const enrolment = postOptions.enrolment === true;
      if (!enrolment && mutualTls && agent === undefined) throw new Error(`no sensor certificate to present to ${base} (enrol first)`);
      const dispatcher = enrolment ? enrolmentAgent : agent;
      return fetch(`${enrolment ? enrolmentBase : base}${path}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
        signal: AbortSignal.timeout(options.timeoutMs),
        ...(dispatcher === undefined ? {} : { dispatcher }),
      });
    },
    async get(path, headers) {
      if (mutualTls && agent === undefined) throw new Error(`no sensor certificate to present to ${base} (enrol first)`);
      return fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(options.timeoutMs), ...(agent === undefined ? {} : { dispatcher: agent }) });
    },
    reload,
    async close() {
      await Promise.all([agent?.close(), enrolmentAgent?.close()]);
    },
  };
}
