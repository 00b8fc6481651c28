/**
 * State that lives in one worker's memory, reachable from every worker of the instance. With
 * WORKERS > 1 the cluster primary hands each connection to a worker in turn, so a client's next
 * request for such state (an MCP channel to a stdio process, a legacy SSE stream) often reaches a
 * worker that does not hold it. That state's ids name the worker that issued them (`<id>.w<N>`),
 * every worker listens on a private Unix socket besides the shared port, and a worker that gets a
 * request for another worker's state pipes it there unchanged: the owner authenticates, limits,
 * inspects and logs it as if it had come in directly.
 *
 *   - The sockets live in a directory the primary creates (mode 0700) and names to its workers in
 *     SVC_CLUSTER_DIR; only svc's own user can connect.
 *   - The forwarding worker adds the client's address in X-Svc-Peer; the owner's private listener
 *     takes it as the connection's remote address (and drops the header), so rate limits and logs
 *     see the client, not the hop. The shared port never reads that header.
 *   - A worker that is gone (its state went with it) cannot be reached: the request is served
 *     where it arrived, which answers as it does for any unknown id.
 * In a single process every id is plain and nothing is forwarded.
 */
import cluster from 'node:cluster';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

/** The environment variable that names the primary's socket directory to its workers. */
export const CLUSTER_DIR_ENV = 'SVC_CLUSTER_DIR';
const PEER_HEADER = 'x-svc-peer';
const TAG = /\.w([1-9]\d{0,8})$/;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

export interface ForwardHandlers {
  /** The owner could not be reached and nothing was read or written: serve the request here. */
  unreachable(): void;
  /** The hop failed after the request was sent (the owner died): answer the client an error. */
  failed(error: Error): void;
}

export interface WorkerRouting {
  /** True in a cluster worker (ids are tagged, requests may be forwarded). */
  readonly enabled: boolean;
  /** An id for state this worker holds in memory: `base` tagged with this worker (plain in one process). */
  localId(base: string): string;
  /** The worker that issued `id`, when that is another worker of this instance; else null. */
  ownerElsewhere(id: string): number | null;
  /**
   * Pipes the request to worker `owner`'s private listener and its answer back to the client.
   * Returns what ends the hop early (this worker's shutdown): the answer so far, `last` if given
   * (a final event), then its end.
   */
  forward(raw: IncomingMessage, res: ServerResponse, owner: number, handlers: ForwardHandlers): (last?: string) => void;
}

function socketPath(dir: string, worker: number): string {
  return join(dir, `w${worker}.sock`);
}

/** Longest Unix socket path this module creates (sun_path holds 107 bytes; longer ones are cut short). */
const MAX_SOCKET_PATH = 100;

const DIR_PREFIX = 'svc-cluster-';
/** The file in a socket directory that names the primary owning it. */
const OWNER_FILE = 'primary.pid';

/**
 * A directory for the workers' sockets, mode 0700; under the temp directory unless its path is too
 * long for a socket. It names its primary (`primary.pid`), and directories left by primaries that
 * are gone (killed before they could remove theirs) are removed first.
 */
export function createSocketDir(): string {
  for (const base of [tmpdir(), '/tmp']) {
    const dir = mkdtempSync(join(base, DIR_PREFIX));
    if (Buffer.byteLength(socketPath(dir, 999_999_999)) <= MAX_SOCKET_PATH) {
      writeFileSync(join(dir, OWNER_FILE), `${process.pid} ${placeOfPids()}\n`, { mode: 0o600 });
      removeStaleSocketDirs(base);
      return dir;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  throw new Error(`no directory short enough for the workers' sockets (at most ${MAX_SOCKET_PATH} bytes); set TMPDIR to a shorter path`);
}

/**
 * Removes the socket directories under `base` that this user's primaries left behind: those whose
 * `primary.pid` names a process of this host and pid namespace that no longer exists. A directory
 * without that file, another user's, one written on another host or in another pid namespace, or
 * one whose primary is alive is left alone. Returns the directories removed.
 */
export function removeStaleSocketDirs(base: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(base).filter((name) => name.startsWith(DIR_PREFIX));
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const dir = join(base, name);
    try {
      const stat = lstatSync(dir);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      const [pidText, place] = readFileSync(join(dir, OWNER_FILE), 'utf8').trim().split(' ');
      const pid = Number(pidText);
      // A pid means something only on this host and in this pid namespace (containers may share
      // /tmp): a directory written from elsewhere is never judged.
      if (!Number.isSafeInteger(pid) || pid <= 0 || place !== placeOfPids() || alive(pid)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // No owner file (not ours to judge), or it went away meanwhile.
    }
  }
  return removed;
}

/** This host and pid namespace, as `<hostname>/<pid namespace>`, so a pid written elsewhere is not read here. */
function placeOfPids(): string {
  let namespace = 'unknown';
  try {
    namespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // No /proc (not Linux): the host name alone.
  }
  return `${hostname()}/${namespace}`.replaceAll(' ', '_');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists under another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Which worker this is and where the sockets are; by default this process's cluster worker id and SVC_CLUSTER_DIR (tests pass both). */
interface PlacementOptions {
  readonly workerId?: number | null;
  readonly dir?: string | null;
}

function placement(options: PlacementOptions): { self: number | null; dir: string | null } {
  const self = options.workerId === undefined ? (cluster.isWorker ? (cluster.worker?.id ?? null) : null) : options.workerId;
  const dir = options.dir === undefined ? (process.env[CLUSTER_DIR_ENV] ?? null) : options.dir;
  return { self, dir: dir === '' ? null : dir };
}

/** This process's routing: tagged ids and forwarding in a cluster worker with a socket directory. */
export function workerRouting(options: PlacementOptions = {}): WorkerRouting {
  const { self, dir } = placement(options);
  if (self === null || dir === null) {
    return {
      enabled: false,
      localId: (base) => base,
      ownerElsewhere: () => null,
      forward: (_raw, _res, _owner, handlers) => {
        handlers.unreachable();
        return () => undefined;
      },
    };
  }
  const suffix = `.w${self}`;
  return {
    enabled: true,
    localId: (base) => base + suffix,
    ownerElsewhere(id) {
      const match = TAG.exec(id);
      if (match === null) return null;
      const owner = Number(match[1]);
      return owner === self ? null : owner;
    },
    forward(raw, res, owner, handlers) {
      const headers: IncomingHttpHeaders = {};
      const named = new Set(String(raw.headers.connection ?? '').toLowerCase().split(',').map((token) => token.trim()));
      for (const [name, value] of Object.entries(raw.headers)) if (!HOP_BY_HOP.has(name) && !named.has(name) && name !== PEER_HEADER) headers[name] = value;
      // A chunked body is framed again on the hop (node:http does not chunk a GET or DELETE by itself).
      if (raw.headers['transfer-encoding'] !== undefined) headers['transfer-encoding'] = 'chunked';
      headers[PEER_HEADER] = raw.socket.remoteAddress ?? '';
      // Kept open until both directions are done: an owner that answers before reading the whole
      // body (a body limit, a refused credential) reads and drops the rest instead of resetting
      // the hop, so its answer reaches the client. The hop's socket serves this request only.
      headers.connection = 'keep-alive';
      const outgoing = request({ socketPath: socketPath(dir, owner), method: raw.method, path: raw.url, headers, agent: false, setHost: false });
      let sent = false;
      let relayed: IncomingMessage | null = null;
      outgoing.once('socket', (socket) => {
        socket.once('connect', () => {
          sent = true;
          raw.pipe(outgoing);
        });
      });
      outgoing.once('response', (answer) => {
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) res.setHeader(name, value);
        res.writeHead(answer.statusCode ?? 502);
        // Event streams are relayed as they come; a client that leaves ends the hop.
        res.flushHeaders();
        relayed = answer;
        answer.pipe(res);
        answer.once('end', () => {
          if (outgoing.writableFinished) outgoing.destroy();
          else outgoing.once('finish', () => outgoing.destroy());
        });
        answer.once('error', () => {
          if (!res.writableEnded) res.destroy();
        });
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        if (sent) return; // the owner may answer before it read the whole body (413, 401): 'close' decides
        // Only an owner that is gone hands the request back; a busy one (EAGAIN, EMFILE) is a retryable 503.
        if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') handlers.unreachable();
        else fail(error);
      });
      outgoing.once('close', () => {
        if (sent && relayed === null) fail(new Error('the owner worker closed the hop without an answer'));
      });
      const fail = (error: Error) => {
        raw.unpipe(outgoing);
        raw.resume(); // what is left of the body is read and dropped, so a kept-alive connection moves on
        if (!res.headersSent) handlers.failed(error);
        else if (!res.writableEnded) res.destroy();
      };
      res.once('close', () => {
        if (!res.writableFinished) outgoing.destroy();
      });
      return (last?: string) => {
        if (relayed === null) {
          outgoing.destroy();
          return;
        }
        relayed.unpipe(res);
        relayed.destroy();
        if (res.writableEnded) return;
        if (last !== undefined) res.write(last);
        res.end();
      };
    },
  };
}

/**
 * This worker's private listener (a Unix socket in the primary's directory) serving the same
 * requests as the shared port through `handle`; null outside a cluster. Closed by the caller.
 */
export async function listenPrivately(handle: (raw: IncomingMessage, res: ServerResponse) => void, options: PlacementOptions = {}): Promise<Server | null> {
  const { self, dir } = placement(options);
  if (self === null || dir === null) return null;
  const server = createServer((raw, res) => {
    const peer = raw.headers[PEER_HEADER];
    delete raw.headers[PEER_HEADER];
    // One connection per forwarded request (the hop uses no agent): the socket is this request's.
    if (typeof peer === 'string' && peer !== '') Object.defineProperty(raw.socket, 'remoteAddress', { value: peer, configurable: true });
    handle(raw, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath(dir, self), () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(socketPath(dir, self), 0o600);
  return server;
}
