// Where a bench server spends one request, from diagnostics channels that node:http, Fastify and
// undici publish anyway (no change to the server's code): when BENCH_PHASES_FILE is set, every
// request carrying `x-bench-phase` is timed at six points and the list is written to that file
// at SIGTERM. For sequential probes (one request at a time): the marks of a request are the first
// of each kind between its start and its finish.
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';

type PhaseMark = 'request' | 'handler' | 'dispatch' | 'sent' | 'upstream_done' | 'finish';
export type PhaseTimes = Partial<Record<PhaseMark, number>>;

export function recordPhases(): void {
  const file = process.env.BENCH_PHASES_FILE;
  if (file === undefined || file === '') return;
  const done: PhaseTimes[] = [];
  let current: PhaseTimes | null = null;
  const mark = (name: PhaseMark) => () => {
    if (current !== null && current[name] === undefined) current[name] = performance.now();
  };
  subscribe('http.server.request.start', (message) => {
    const request = (message as { request: IncomingMessage }).request;
    current = request.headers['x-bench-phase'] === undefined ? null : { request: performance.now() };
  });
  subscribe('tracing:fastify.request.handler:start', mark('handler'));
  subscribe('undici:request:create', mark('dispatch'));
  subscribe('undici:client:sendHeaders', mark('sent'));
  subscribe('undici:request:trailers', mark('upstream_done'));
  subscribe('http.server.response.finish', () => {
    if (current === null) return;
    current.finish = performance.now();
    done.push(current);
    current = null;
  });
  process.once('SIGTERM', () => writeFileSync(file, JSON.stringify(done)));
}
