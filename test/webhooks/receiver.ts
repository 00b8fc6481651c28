/**
 * A real HTTP receiver on loopback for delivery tests. Each path picks a behaviour per request
 * (by the request's index for that path): answer with a status (and headers), hold the request
 * without answering (timeout), or destroy the socket (connection reset). `stallMs` answers and
 * then blocks this process's event loop for that long, as a loaded machine stalls svc (which
 * shares the process) right after a receiver answered in time.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
export { waitFor } from '../helpers/wait.ts';

export type Behaviour = { status: number; headers?: Record<string, string>; stallMs?: number } | 'hang' | 'reset';

export interface ReceivedRequest {
  path: string;
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  answered: number | 'hang' | 'reset';
}

export interface Receiver {
  url(path: string): string;
  /** Behaviours for a path, by request index; the last one repeats. */
  on(path: string, ...behaviours: Behaviour[]): void;
  received(path?: string): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const scripts = new Map<string, Behaviour[]>();
  const log: ReceivedRequest[] = [];
  const hanging = new Set<() => void>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const script = scripts.get(path) ?? [{ status: 200 }];
      const index = log.filter((entry) => entry.path === path).length;
      const behaviour = script[Math.min(index, script.length - 1)]!;
      const entry: ReceivedRequest = {
        path,
        at: Date.now(),
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        answered: typeof behaviour === 'string' ? behaviour : behaviour.status,
      };
      log.push(entry);
      if (behaviour === 'reset') {
        request.socket.destroy();
      } else if (behaviour === 'hang') {
        const release = () => response.destroy();
        hanging.add(release);
        response.on('close', () => hanging.delete(release));
      } else {
        response.writeHead(behaviour.status, { 'content-type': 'text/plain', ...behaviour.headers });
        response.end('ok');
        if (behaviour.stallMs !== undefined) {
          const until = performance.now() + behaviour.stallMs;
          while (performance.now() < until) {
            // the event loop is blocked, as under load
          }
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    on: (path, ...behaviours) => void scripts.set(path, behaviours),
    received: (path) => log.filter((entry) => path === undefined || entry.path === path),
    async close() {
      for (const release of hanging) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

