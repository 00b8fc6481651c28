/**
 * A client that breaks its own body (bad chunk framing, or gone before Content-Length bytes
 * arrived) is the client's doing: svc answers or drops it without reporting a dependency outage.
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, memoryLog, type TestContext } from '../helpers/app.ts';

const log = memoryLog();
let context: TestContext;
let key: string;
let port: number;

beforeAll(async () => {
  context = await createTestApp({ env: { LOG_LEVEL: 'info' }, logDestination: log.destination });
  key = (await context.createOrg()).apiKey;
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  port = (context.app.server.address() as AddressInfo).port;
});
afterAll(async () => context.close());

/** Sends raw bytes, waits `holdMs`, closes; resolves with what came back. */
function raw(bytes: string, holdMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, holdMs);
  });
}

describe('a client that breaks its own request body', () => {
  it('is answered 400 (bad chunk) or dropped (gone mid-body), and never logged as a dependency failure', async () => {
    const head = `POST /api/v1/inspect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n`;
    const badChunk = await raw(`${head}Transfer-Encoding: chunked\r\n\r\nzz\r\n`, 500);
    expect(badChunk.startsWith('HTTP/1.1 400')).toBe(true);
    await raw(`${head}Content-Length: 1000\r\n\r\n{"kind":`, 300);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(log.lines.filter((line) => line.includes('SERVICE_UNAVAILABLE') || line.includes('request failed: dependency'))).toEqual([]);
    // The service is fine afterwards.
    const ok = await context.app.inject({ method: 'POST', url: '/api/v1/inspect', headers: { authorization: `Bearer ${key}` }, payload: { kind: 'prompt', content: 'hello' } });
    expect(ok.statusCode).toBe(200);
  });
});
