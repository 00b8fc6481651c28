/**
 * Issue #14: a streamed completion open at SIGTERM held `app.close()` until the 30 s drain
 * deadline, after which the process exited without `services.close()` (evidence not flushed,
 * storage not closed). Shutdown now ends open streams first (Fastify preClose): the upstream
 * call is cancelled, the client gets a final SSE error event and the response ends, all within
 * the stream grace period. Against a slow fake OpenAI on loopback (one chunk every 2 s, ~80 s in all),
 * and a protected gateway relaying a slow backend stream (cut after the grace period).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import { STREAM_SHUTDOWN_GRACE_MS } from '../../src/platform/streams.ts';
import type { Services } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services | undefined;
let app: AppInstance | undefined;
let fake: FakeProvider | undefined;
let backend: Server | undefined;

afterAll(async () => {
  await app?.close();
  await services?.close();
  await fake?.close();
  backend?.closeAllConnections();
  await new Promise<void>((resolve) => (backend ? backend.close(() => resolve()) : resolve()));
});

describe('shutdown with open streams', () => {
  it('ends a streamed completion with a SERVICE_UNAVAILABLE event so shutdown finishes within the grace period', async () => {
    // 40 words, one every 2 s: the upstream stream would run for about 80 s.
    const content = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    fake = await startFakeProvider('openai', { behaviour: { content, chunkDelayMs: 2_000 } });
    services = await createTestServices({ services: { gateway: { timers: false } } });
    app = await buildApp(services.config, services);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    const { org, apiKey } = await services.accounts.createOrg({ name: 'shutdown-streams' });
    await services.accounts.providerKeys.set(org.id, 'openai', FAKE_CREDENTIALS.default, fake.baseUrl);

    const payload = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'count slowly' }] });
    let body = '';
    let firstData!: () => void;
    const gotData = new Promise<void>((resolve) => (firstData = resolve));
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/gateway/completions', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } },
        resolve,
      );
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
    expect(response.statusCode).toBe(200);
    const ended = new Promise<'end' | 'aborted'>((resolve) => {
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
        firstData();
      });
      response.once('end', () => resolve('end'));
      response.once('aborted', () => resolve('aborted'));
      response.once('error', () => resolve('aborted'));
    });
    await gotData;

    const bound = STREAM_SHUTDOWN_GRACE_MS + 3_000;
    const closing = app.close().then(() => 'closed' as const);
    const outcome = await Promise.race([closing, new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), bound).unref())]);
    expect(outcome).toBe('closed');
    expect(await ended).toBe('end');

    const events = body.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
    expect(events).not.toContain('[DONE]');
    const last = JSON.parse(events.at(-1)!) as { error?: { code?: string; details?: { reason?: string } } };
    expect(last.error?.code).toBe('SERVICE_UNAVAILABLE');
    expect(last.error?.details?.reason).toBe('shutting_down');
    expect(services.streams.size()).toBe(0);
    app = undefined;
    // Storage still closes normally afterwards (the step the 30 s deadline used to skip).
    await services.close();
    services = undefined;
  }, 150_000);

  it('cuts a proxied backend stream after the grace period so shutdown does not wait for the backend', async () => {
    // A backend on loopback that streams one line a second for a minute.
    backend = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        response.write(`line ${sent}\n`);
        if (++sent === 60) {
          clearInterval(timer);
          response.end();
        }
      }, 1_000);
      response.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => backend!.listen(0, '127.0.0.1', () => resolve()));
    const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    services = await createTestServices({ services: { gateway: { timers: false } } });
    app = await buildApp(services.config, services);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    const { apiKey } = await services.accounts.createOrg({ name: 'shutdown-proxied' });
    const created = await new Promise<{ status: number; id: string }>((resolve, reject) => {
      const outgoing = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/gateways', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } },
        (answer) => {
          let text = '';
          answer.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          answer.on('end', () => resolve({ status: answer.statusCode ?? 0, id: (JSON.parse(text) as { id: string }).id }));
        },
      );
      outgoing.on('error', reject);
      outgoing.end(JSON.stringify({ name: 'slow stream', backend_url: backendUrl, mode: 'monitor' }));
    });
    expect(created.status).toBe(201);

    let firstData!: () => void;
    const gotData = new Promise<void>((resolve) => (firstData = resolve));
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: `/gw/${created.id}/feed` }, resolve);
      outgoing.on('error', reject);
      outgoing.end();
    });
    expect(response.statusCode).toBe(200);
    const ended = new Promise<'end' | 'cut'>((resolve) => {
      response.on('data', () => firstData());
      response.once('end', () => resolve('end'));
      response.once('aborted', () => resolve('cut'));
      response.once('error', () => resolve('cut'));
    });
    await gotData;
    expect(services.streams.size()).toBe(1);

    const bound = STREAM_SHUTDOWN_GRACE_MS + 3_000;
    const closing = app.close().then(() => 'closed' as const);
    const outcome = await Promise.race([closing, new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), bound).unref())]);
    expect(outcome).toBe('closed');
    // Nothing can be appended to a backend's body: the client sees the connection cut, not a clean end.
    expect(await ended).toBe('cut');
    expect(services.streams.size()).toBe(0);
    app = undefined;
    await services.close();
    services = undefined;
  }, 60_000);
});
