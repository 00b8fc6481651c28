/**
 * The legacy HTTP+SSE transport towards clients (protocol revision 2024-11-05): a client opens
 * `GET /mcp/{id}/sse`, receives an `endpoint` event naming `/mcp/{id}/messages?sessionId=…`, POSTs
 * its messages there (202 Accepted) and reads every answer on the event stream.
 *
 * Each POST goes through the proxy exactly as a Streamable HTTP POST would (same inspection,
 * refusals, audit), in the upstream session the first `initialize` opened; the answers (JSON or an
 * event stream) are written to the client's stream as `message` events. The legacy session id is
 * random, bound to the org and credential that opened the stream (another caller gets 404), and
 * lives as long as the stream: closing it ends the upstream session. In a cluster the id names the
 * worker holding the stream, and POSTs that reach another worker are forwarded to it
 * (src/platform/worker-routing.ts).
 */
import { randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import type { ProxyCaller, ProxyRequest, ProxyResponse } from './proxy.ts';
import { serializeEvent, SseParser } from './sse.ts';
import type { McpServerRecord } from './store.ts';
import { entryBound } from '../platform/lru.ts';

interface LegacySession {
  readonly server: McpServerRecord;
  readonly caller: ProxyCaller;
  readonly stream: PassThrough;
  /** Aborted when the client's stream closes: ends every upstream request of the session. */
  readonly closed: AbortController;
  readonly xSessionId: string | undefined;
  upstreamSessionId: string | undefined;
  protocolVersion: string | undefined;
  /**
   * POSTs are forwarded in order, each once the previous one's answer has begun (so an
   * initialize's session id is known to the next). Their answers are relayed as they come, not
   * one POST after another: the answer a client POSTs to a server's request (sampling,
   * elicitation, roots) must reach the server while the call that asked for it is still open.
   */
  queue: Promise<void>;
}

const MAX_SESSIONS = 10_000;

export function createLegacySse(handle: (request: ProxyRequest) => Promise<ProxyResponse>, newId: () => string = randomUUID) {
  const sessions = new LRUCache<string, LegacySession>({ ...entryBound(MAX_SESSIONS), dispose: (session) => void session.stream.end() });

  const write = (session: LegacySession, data: string) => {
    if (!session.stream.writableEnded) session.stream.write(serializeEvent({ event: 'message', data }));
  };

  async function relay(session: LegacySession, body: string | Readable | null): Promise<void> {
    if (body === null) return;
    if (typeof body === 'string') {
      if (body === '') return;
      try {
        const value = JSON.parse(body) as unknown;
        for (const message of Array.isArray(value) ? value : [value]) write(session, JSON.stringify(message));
      } catch {
        // Not JSON (an upstream 202 body): nothing to relay.
      }
      return;
    }
    const parser = new SseParser();
    const decoder = new TextDecoder();
    for await (const chunk of body) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk as Uint8Array, { stream: true });
      for (const event of parser.feed(text)) if (event.data !== undefined && event.data !== '') write(session, event.data);
    }
  }

  return {
    /** Opens a client's event stream: the first event names where to POST. */
    open(server: McpServerRecord, caller: ProxyCaller, headers: ProxyRequest['headers']): PassThrough {
      const id = newId();
      const stream = new PassThrough();
      const xSession = headers['x-session-id'];
      const session: LegacySession = { server, caller, stream, closed: new AbortController(), xSessionId: typeof xSession === 'string' && xSession !== '' ? xSession : undefined, upstreamSessionId: undefined, protocolVersion: undefined, queue: Promise.resolve() };
      sessions.set(id, session);
      stream.write(serializeEvent({ event: 'endpoint', data: `/mcp/${server.id}/messages?sessionId=${id}` }));
      stream.once('close', () => {
        session.closed.abort();
        if (sessions.get(id) === session) sessions.delete(id);
        if (session.upstreamSessionId !== undefined) {
          void handle({ method: 'DELETE', server, caller, headers: { 'mcp-session-id': session.upstreamSessionId, ...(session.xSessionId === undefined ? {} : { 'x-session-id': session.xSessionId }) }, body: null, requestId: randomUUID(), signal: new AbortController().signal }).then(
            (response) => (typeof response.body === 'object' && response.body !== null ? void response.body.resume() : undefined),
            () => undefined,
          );
        }
      });
      return stream;
    },

    /**
     * A client POST to its session's messages endpoint. Answers 202 once the proxy accepted the
     * message (its answers follow on the stream), the proxy's own 4xx when it refused the body,
     * or 404 for an unknown session or another caller's.
     */
    async message(serverId: string, sessionId: string, caller: ProxyCaller, body: Buffer | null, requestId: string): Promise<{ status: number; body: string }> {
      const session = sessions.get(sessionId);
      if (session === undefined || session.server.id !== serverId || session.caller.orgId !== caller.orgId || session.caller.actor !== caller.actor) {
        return { status: 404, body: 'Session not found' };
      }
      const run = session.queue.then(async () => {
        const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        if (session.upstreamSessionId !== undefined) headers['mcp-session-id'] = session.upstreamSessionId;
        if (session.protocolVersion !== undefined) headers['mcp-protocol-version'] = session.protocolVersion;
        if (session.xSessionId !== undefined) headers['x-session-id'] = session.xSessionId;
        // One signal for the session (a listener per POST on the stream would pile up over its life).
        const response = await handle({ method: 'POST', server: session.server, caller: session.caller, headers, body, requestId, signal: session.closed.signal });
        const issued = response.headers['mcp-session-id'];
        if (issued !== undefined) session.upstreamSessionId = issued;
        const version = response.headers['mcp-protocol-version'];
        if (version !== undefined) session.protocolVersion = version;
        return response;
      });
      session.queue = run.then(() => undefined, () => undefined);
      void run.then(
        (response) => (response.status < 400 ? relay(session, response.body).catch(() => undefined) : undefined),
        () => undefined,
      );
      const response = await run;
      if (response.status >= 400) {
        // The proxy refused the body (parse error, invalid request) or the session: say so to the POST.
        if (response.body !== null && typeof response.body !== 'string') response.body.resume();
        return { status: response.status, body: typeof response.body === 'string' ? response.body : '' };
      }
      return { status: 202, body: 'Accepted' };
    },

    size(): number {
      return sessions.size;
    },
    close(): void {
      sessions.clear();
    },
  };
}

export type LegacySse = ReturnType<typeof createLegacySse>;
