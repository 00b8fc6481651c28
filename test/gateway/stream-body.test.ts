import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../../src/gateway/http-client.ts';

// An upstream that answers a streamed request with more than the reader's high-water mark at
// once: the body pauses the upstream until the reader catches up or drops the rest.
let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(Buffer.alloc(200 * 1024, 97));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('a streamed upstream body', () => {
  // 200 KiB: the rest fits the socket's buffer, so undici reads it, and completes, inside the resume.
  it('settles the drop of an unread rest when the upstream had paused behind a slow reader', async () => {
    const body = await openStream({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, { provider: 'openai', headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000 });
    // The answer arrives and fills the queue past its high-water mark while nobody reads; one read
    // takes a chunk and leaves the queue still full, so the upstream stays paused.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const first = await body.next();
    expect(first.done).toBe(false);
    const outcome = await Promise.race([
      body.dump({ limit: 1024 * 1024 }).then(() => 'settled' as const),
      new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 3_000)),
    ]);
    expect(outcome).toBe('settled');
  });
});
