/**
 * Issue #33 item 8: the busy-port hint suggested PORT+1 without looking, even when that port was
 * in use too. It now names a port it found free, or none.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { assertPortFree, PortInUseError } from '../../src/platform/port-probe.ts';

const servers: Server[] = [];

function listen(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      servers.push(server);
      resolve(server);
    });
  });
}

/** Two adjacent ports, both taken: P and P+1. */
async function busyPair(): Promise<number> {
  for (;;) {
    const first = await listen(0);
    const port = (first!.address() as { port: number }).port;
    if (port < 65_535 && (await listen(port + 1)) !== null) return port;
  }
}

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('the busy-port hint', () => {
  it('never suggests a port that is itself in use', async () => {
    const port = await busyPair();
    const refusal = await assertPortFree('127.0.0.1', port).then(() => null, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(PortInUseError);
    const { code, suggestion, message } = refusal as PortInUseError;
    expect(code).toBe('PORT_IN_USE');
    expect(message).not.toContain(`PORT=${port + 1}`);
    if (suggestion !== null) {
      expect(message).toContain(`PORT=${suggestion}`);
      // Free when suggested: it can be bound now.
      const probe = await listen(suggestion);
      expect(probe).not.toBeNull();
    }
  });
});
