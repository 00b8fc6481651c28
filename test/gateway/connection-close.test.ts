/**
 * Issue #33 item 8: a streamed completion honours the client's `Connection: close` (it used to
 * answer `Connection: keep-alive` and leave the connection open after the stream's end).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services;
let app: AppInstance;
let openai: FakeProvider;
let port: number;
let apiKey: string;

beforeAll(async () => {
  services = await createTestServices({ services: { gateway: { timers: false } } });
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
  openai = await startFakeProvider('openai');
  const created = await services.accounts.createOrg({ name: 'connection-close' });
  apiKey = created.apiKey;
  await services.accounts.providerKeys.set(created.org.id, 'openai', FAKE_CREDENTIALS.default, openai.baseUrl);
});

afterAll(async () => {
  await app?.close();
  await services?.close();
  await openai?.close();
});

/** One streamed completion on a raw connection: what came back, and whether svc closed it within 3 s of the stream's end. */
function streamed(connection: 'close' | 'keep-alive'): Promise<{ head: string; body: string; closedBySvc: boolean }> {
  const payload = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const finish = (closedBySvc: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const split = text.indexOf('\r\n\r\n');
      resolve({ head: text.slice(0, split), body: text.slice(split + 4), closedBySvc });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('[DONE]') && timer === undefined) timer = setTimeout(() => finish(false), 3_000);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    socket.write(
      `POST /api/v1/gateway/completions HTTP/1.1\r\nHost: svc.example\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: ${connection}\r\n\r\n${payload}`,
    );
  });
}

describe('a streamed completion', () => {
  it('answers Connection: close and closes the connection after the stream when the client sent Connection: close', async () => {
    const { head, body, closedBySvc } = await streamed('close');
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(body).toContain('data: [DONE]');
    expect(head.toLowerCase()).toContain('\r\nconnection: close');
    expect(closedBySvc).toBe(true);
  });

  it('keeps a keep-alive connection open after the stream', async () => {
    const { head, body, closedBySvc } = await streamed('keep-alive');
    expect(body).toContain('data: [DONE]');
    expect(head.toLowerCase()).toContain('\r\nconnection: keep-alive');
    expect(closedBySvc).toBe(false);
  });
});
