/**
 * Long-lived responses (a streamed completion, an MCP SSE stream, a proxied backend stream)
 * that shutdown must end before the HTTP server can close.
 *
 * `app.close()` waits for every response in progress; a stream that the client keeps open
 * would hold it until the drain deadline, after which the process left without closing storage.
 * Each streaming handler registers how to end its stream; on shutdown (Fastify's `preClose`)
 * `endAll` asks every open stream to end cleanly — the gateway and MCP streams write a final
 * SSE error event (`SERVICE_UNAVAILABLE`, `reason: "shutting_down"`) and end the response —
 * waits for them up to the grace period, and destroys what is still open after it.
 */

/**
 * How long shutdown waits for open streams to end after asking them, ms; then they are
 * destroyed. Well inside the process's drain deadline (30 s, src/server.ts), which must still
 * leave time for services.close() to flush evidence and close storage.
 */
export const STREAM_SHUTDOWN_GRACE_MS = 5_000;

/** The reason given to a stream's end: tells handlers that the server is stopping (not the client leaving). */
export class ShuttingDownError extends Error {
  override readonly name = 'ShuttingDownError';
  constructor() {
    super('svc is shutting down');
  }
}

export function isShuttingDown(reason: unknown): reason is ShuttingDownError {
  return reason instanceof ShuttingDownError;
}

/** The payload of the final SSE error event of a stream ended by shutdown. */
export function shutdownErrorPayload(requestId: string): { request_id: string; error: { code: 'SERVICE_UNAVAILABLE'; message: string; details: { reason: 'shutting_down' } } } {
  return {
    request_id: requestId,
    error: { code: 'SERVICE_UNAVAILABLE', message: 'The server is shutting down; retry the request.', details: { reason: 'shutting_down' } },
  };
}

export interface OpenStream {
  /** Ends the stream cleanly (final event, then end); called once, on shutdown. */
  end(reason: ShuttingDownError): void;
  /** Ends it at once (socket destroyed): the grace period is over. */
  destroy(): void;
}

export interface StreamRegistry {
  /** Registers an open stream; call the returned function when it ends (idempotent). */
  track(stream: OpenStream): () => void;
  /** Streams open now. */
  size(): number;
  /** True once shutdown began: a stream opened now is ended at once. */
  readonly closing: boolean;
  /**
   * Ends every open stream and resolves when all have ended, or after `graceMs` once the
   * remaining ones were destroyed. Returns how many were ended cleanly and how many destroyed.
   */
  endAll(graceMs: number): Promise<{ ended: number; destroyed: number }>;
}

export function createStreamRegistry(): StreamRegistry {
  const open = new Set<OpenStream>();
  let closing = false;
  let emptied: (() => void) | null = null;
  const reason = new ShuttingDownError();

  const untrack = (stream: OpenStream) => {
    if (!open.delete(stream)) return;
    if (open.size === 0) emptied?.();
  };

  return {
    track(stream) {
      open.add(stream);
      if (closing) queueMicrotask(() => stream.end(reason));
      return () => untrack(stream);
    },
    size: () => open.size,
    get closing() {
      return closing;
    },
    async endAll(graceMs) {
      closing = true;
      const total = open.size;
      if (total === 0) return { ended: 0, destroyed: 0 };
      const done = new Promise<void>((resolve) => {
        emptied = resolve;
      });
      for (const stream of [...open]) {
        try {
          stream.end(reason);
        } catch {
          stream.destroy();
          untrack(stream);
        }
      }
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => {
        timer = setTimeout(() => resolve('expired'), graceMs);
        timer.unref();
      });
      const outcome = open.size === 0 ? 'done' : await Promise.race([done.then(() => 'done' as const), expired]);
      clearTimeout(timer);
      let destroyed = 0;
      if (outcome === 'expired') {
        for (const stream of [...open]) {
          destroyed += 1;
          stream.destroy();
          untrack(stream);
        }
      }
      return { ended: total - destroyed, destroyed };
    },
  };
}
