/**
 * Issue #14: a streamed completion open at SIGTERM held `app.close()` until the 30 s drain
 * deadline, after which the process exited without `services.close()` (evidence not flushed,
 * storage not closed). Shutdown now ends open streams first (Fastify preClose): the upstream
 * call is cancelled, the client gets a final SSE error event and the response ends, all within
 * the stream grace period. Against a slow fake OpenAI on loopback (one chunk every 2 s, ~80 s in all).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
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

afterAll(async () => {
  await app?.close();
  await services?.close();
  await fake?.close();
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
});
