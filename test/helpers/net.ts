import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * Ports are drawn below Linux's ephemeral range (32768–60999 by default), where the kernel picks
 * the source port of every outgoing connection: a port the OS hands out for `listen(0)` can be
 * taken as a source port by any client in the meantime (a database pool, an HTTP client of a
 * parallel test), before the child process binds it or while a test restarts a server on it.
 */
const LOW = 20_000;
const HIGH = 32_000;

/** Whether `port` can be bound on 127.0.0.1 right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for child processes the test starts). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = randomInt(LOW, HIGH);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found between ${LOW} and ${HIGH}`);
}
