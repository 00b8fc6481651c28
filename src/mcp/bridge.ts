/**
 * Message-channel upstreams (stdio, legacy HTTP+SSE) behind the proxy: a small in-process
 * Streamable HTTP endpoint over a channel of JSON-RPC messages, so the proxy inspects, relays and
 * audits them exactly as it does a Streamable HTTP upstream.
 *
 * - POST with `initialize` and no Mcp-Session-Id opens a channel (spawns the process, or opens the
 *   upstream's SSE stream) and issues a session id svc generates; POSTs with requests are answered
 *   with an event stream that carries their responses (and the server's requests and notifications
 *   that come while it is open) and ends when every request is answered; POSTs with only
 *   notifications or responses get 202. GET opens the session's stream for server-initiated
 *   messages (kept in a bounded backlog until one is open); DELETE closes the channel.
 * - A channel lives in the process that opened it. Its session id names that worker, and the other
 *   workers of the instance forward the session's requests to it (src/platform/worker-routing.ts);
 *   separate instances need session affinity on Mcp-Session-Id (another instance answers 404 and
 *   the client starts over).
 * - Bounded: channels per replica (least recently used closed first), idle channels closed after
 *   the session TTL, backlog messages per session, line and event sizes (in the channels).
 * - Events carry no ids, so a dropped stream cannot be resumed with Last-Event-ID (the messages a
 *   client missed are lost; the SDK then times its request out).
 * - A channel that closes (the process died, the SSE connection dropped) answers every request
 *   still waiting with a JSON-RPC error under its id before its stream ends; an `initialize` left
 *   unanswered for `initializeTimeoutMs` is answered the same way and its channel closed.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { idKey, isRequest, isResponse, rpcError, type JsonRpcId, type JsonRpcMessage } from './jsonrpc.ts';
import { serializeEvent } from './sse.ts';

/** A bidirectional JSON-RPC message channel to one upstream session. */
export interface Channel {
  send(message: JsonRpcMessage): void;
  close(): Promise<void>;
}

export interface ChannelHandlers {
  onmessage(message: JsonRpcMessage): void;
  onclose(): void;
}

export interface UpstreamCall {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | string | null;
}

export interface UpstreamAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: Readable;
}

export interface BridgeOptions {
  /** Opens a channel to the server (throws when it cannot: the client gets 502). */
  readonly open: (handlers: ChannelHandlers) => Promise<Channel>;
  readonly maxSessions?: number;
  readonly idleMs?: number;
  readonly now?: () => number;
  /** A new session id (in a cluster it names this worker: src/platform/worker-routing.ts). */
  readonly newId?: () => string;
  /** How long an `initialize` may wait for its answer before the client gets an error and the channel is closed. */
  readonly initializeTimeoutMs?: number;
}

interface Session {
  readonly id: string;
  channel: Channel | null;
  /** Open POST streams by the keys of the request ids they wait for (with the ids, to answer them if the channel closes). */
  readonly waiting: Map<string, { readonly stream: PassThrough; readonly id: JsonRpcId }>;
  /** Open POST streams, newest last (server requests and notifications go to the newest). */
  readonly streams: PassThrough[];
  standalone: PassThrough | null;
  readonly backlog: JsonRpcMessage[];
  lastUsed: number;
}

const MAX_BACKLOG = 1_000;
const INITIALIZE_TIMEOUT_MS = 30_000;

export function createBridge(options: BridgeOptions) {
  const maxSessions = options.maxSessions ?? 256;
  const idleMs = options.idleMs ?? 30 * 60_000;
  const clock = options.now ?? Date.now;
  const newId = options.newId ?? randomUUID;
  const initializeTimeoutMs = options.initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS;
  const sessions = new Map<string, Session>();

  const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): UpstreamAnswer => ({
    statusCode,
    headers: { 'content-type': 'application/json', ...headers },
    body: Readable.from([JSON.stringify(body)]),
  });
  const write = (stream: PassThrough, message: JsonRpcMessage) => {
    if (!stream.writableEnded && !stream.destroyed) stream.write(serializeEvent({ event: 'message', data: JSON.stringify(message) }));
  };

  function deliver(session: Session, message: JsonRpcMessage): void {
    if (isResponse(message)) {
      const key = idKey(message.id);
      const stream = session.waiting.get(key)?.stream;
      if (stream !== undefined) {
        session.waiting.delete(key);
        write(stream, message);
        if (![...session.waiting.values()].some((waiting) => waiting.stream === stream)) endStream(session, stream);
        return;
      }
    }
    const target = session.streams.at(-1) ?? session.standalone;
    if (target !== undefined && target !== null) write(target, message);
    else if (session.backlog.length < MAX_BACKLOG) session.backlog.push(message);
  }

  function endStream(session: Session, stream: PassThrough): void {
    const index = session.streams.indexOf(stream);
    if (index >= 0) session.streams.splice(index, 1);
    for (const [key, waiting] of session.waiting) if (waiting.stream === stream) session.waiting.delete(key);
    if (!stream.writableEnded) stream.end();
  }

  /** Closes the channel; each request still waiting gets `reason` as a JSON-RPC error on its stream first. */
  async function closeSession(session: Session, reason = 'Upstream MCP server closed'): Promise<void> {
    sessions.delete(session.id);
    const channel = session.channel;
    session.channel = null;
    for (const { stream, id } of [...session.waiting.values()]) write(stream, rpcError(id, -32000, reason));
    for (const stream of [...session.streams]) endStream(session, stream);
    session.standalone?.end();
    session.standalone = null;
    await channel?.close().catch(() => undefined);
  }

  async function sweep(): Promise<void> {
    const now = clock();
    for (const session of [...sessions.values()]) if (now - session.lastUsed > idleMs) await closeSession(session);
    while (sessions.size >= maxSessions) {
      const oldest = [...sessions.values()].sort((left, right) => left.lastUsed - right.lastUsed)[0];
      if (oldest === undefined) break;
      await closeSession(oldest);
    }
  }

  async function post(call: UpstreamCall): Promise<UpstreamAnswer> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof call.body === 'string' ? call.body : (call.body ?? Buffer.alloc(0)).toString('utf8'));
    } catch {
      return json(400, rpcError(null, -32700, 'Parse error'));
    }
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as JsonRpcMessage[];
    /** An error of svc's for every request of this POST (an array for a batch; id null when it has none). */
    const refuse = (status: number, code: number, message: string): UpstreamAnswer => {
      const errors = messages.filter(isRequest).map((request) => rpcError(request.id!, code, message));
      if (errors.length === 0) return json(status, Array.isArray(parsed) ? [rpcError(null, code, message)] : rpcError(null, code, message));
      return json(status, Array.isArray(parsed) ? errors : errors[0]);
    };
    const sessionId = call.headers['mcp-session-id'];
    let session: Session | undefined;
    let issued = false;
    if (sessionId === undefined) {
      if (!messages.some((message) => message.method === 'initialize' && isRequest(message))) return refuse(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      await sweep();
      const created: Session = { id: newId(), channel: null, waiting: new Map(), streams: [], standalone: null, backlog: [], lastUsed: clock() };
      try {
        created.channel = await options.open({
          onmessage: (message) => deliver(created, message),
          onclose: () => void closeSession(created),
        });
      } catch {
        return refuse(502, -32000, 'Upstream MCP server unreachable');
      }
      sessions.set(created.id, created);
      session = created;
      issued = true;
    } else {
      session = sessions.get(sessionId);
      if (session === undefined || session.channel === null) return refuse(404, -32001, 'Session not found');
    }
    session.lastUsed = clock();
    const requests = messages.filter(isRequest);
    const headers: Record<string, string> = issued ? { 'mcp-session-id': session.id } : {};
    if (requests.length === 0) {
      for (const message of messages) session.channel!.send(message);
      return { statusCode: 202, headers, body: Readable.from([]) };
    }
    if (requests.some((request) => session.waiting.has(idKey(request.id)))) {
      // Answers are routed by id: a second request under an id still waiting would take the first
      // one's answer (a tool result read as another method's) and leave the first unanswered.
      return refuse(400, -32600, 'Invalid Request: a request with this id is still waiting for its answer');
    }
    const stream = new PassThrough();
    const owner = session;
    stream.once('close', () => endStream(owner, stream));
    for (const request of requests) session.waiting.set(idKey(request.id), { stream, id: request.id! });
    session.streams.push(stream);
    for (const message of messages) session.channel!.send(message);
    if (issued) {
      // A server that never answers `initialize` (hung at start) would hold the client and the
      // process until the idle sweep: after the bound the client gets an error and the channel closes.
      const initialize = requests.find((request) => request.method === 'initialize')!;
      const key = idKey(initialize.id);
      const timer = setTimeout(() => {
        if (owner.waiting.get(key)?.stream === stream) void closeSession(owner, 'Upstream MCP server did not answer initialize in time');
      }, initializeTimeoutMs);
      timer.unref();
      stream.once('close', () => clearTimeout(timer));
    }
    return { statusCode: 200, headers: { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body: stream };
  }

  return {
    async request(call: UpstreamCall): Promise<UpstreamAnswer> {
      if (call.method === 'POST') return post(call);
      const sessionId = call.headers['mcp-session-id'];
      const session = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (sessionId === undefined) return json(400, rpcError(null, -32000, 'Bad Request: Mcp-Session-Id header is required'));
      if (session === undefined) return json(404, rpcError(null, -32001, 'Session not found'));
      session.lastUsed = clock();
      if (call.method === 'DELETE') {
        await closeSession(session);
        return { statusCode: 200, headers: {}, body: Readable.from([]) };
      }
      if (call.method !== 'GET') return json(405, rpcError(null, -32000, 'Method not allowed'));
      if (session.standalone !== null) return json(409, rpcError(null, -32000, 'Conflict: only one stream per session'));
      const stream = new PassThrough();
      session.standalone = stream;
      stream.once('close', () => {
        if (session.standalone === stream) session.standalone = null;
      });
      for (const message of session.backlog.splice(0)) write(stream, message);
      return { statusCode: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body: stream };
    },
    /** Open channels on this replica. */
    size(): number {
      return sessions.size;
    },
    async close(): Promise<void> {
      await Promise.all([...sessions.values()].map((session) => closeSession(session)));
    },
  };
}

export type Bridge = ReturnType<typeof createBridge>;
