/**
 * When the relay writes and when it reads the upstream again: what one upstream read brought
 * goes out before the next read is asked for (time to first byte), and while the client's socket
 * pushes back the upstream is not read at all (svc buffers at most one read's events for a slow
 * client). The byte-for-byte comparison with the per-event relay (relay-batched.test.ts) cannot
 * see either: both relays send the same bytes whether or not the next read waits for 'drain'.
 * Both relays are held to it.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { pipeReference } from '../../test/support/relay-reference.ts';
import type { PreparedCompletion } from './admission.ts';
import { ClientCancel } from './cancel.ts';
import type { StreamEvent } from './contract.ts';
import { openai } from './providers/openai.ts';
import { pipe } from './relay.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** Three upstream reads: two with several deltas each, then the end. */
const READS = [chunk({ role: 'assistant', content: '' }) + chunk({ content: 'a' }) + chunk({ content: 'b' }), chunk({ content: 'c' }) + chunk({ content: 'd' }), `${chunk({}, 'stop')}data: [DONE]\n\n`];

const turns = async (count: number): Promise<void> => {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
};

/** A response whose socket is full (`write` answers false) until the test lets it drain. */
class ClientSocket extends EventEmitter {
  destroyed = false;
  writableFinished = false;
  full = false;
  constructor(private readonly log: string[]) {
    super();
  }
  writeHead(): this {
    return this;
  }
  write(text: string): boolean {
    this.log.push(`write ${(text.match(/"delta":"[a-z]*"/g) ?? []).join(',')}`);
    return !this.full;
  }
  end(): this {
    this.writableFinished = true;
    this.log.push('end');
    return this;
  }
  drainNow(): void {
    this.full = false;
    this.emit('drain');
  }
}

async function relayed(relay: typeof pipe, full: boolean): Promise<{ log: string[]; raw: ClientSocket; done: Promise<void> }> {
  const log: string[] = [];
  const body: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]() {
      let index = 0;
      return {
        next: async () => {
          await turns(1);
          log.push(`read ${index}`);
          return index < READS.length ? { done: false, value: new TextEncoder().encode(READS[index++]) } : { done: true, value: undefined };
        },
      };
    },
  };
  const rest = openai.parseStream(body, 'm')[Symbol.asyncIterator]();
  const first = await rest.next();
  const raw = new ClientSocket(log);
  raw.full = full;
  const prepared = { caller: { requestId: 'req_1' }, request: { messages: [] }, settings: { piiRestore: false }, redaction: null, startedAt: performance.now() } as unknown as PreparedCompletion;
  const done = relay(
    prepared,
    { provider: 'openai', model: 'm', served: { provider: 'openai', model: 'm', passedOver: [], attempts: 1 }, first: first.value as StreamEvent, rest, restore: { push: (delta) => delta, flush: () => '' }, finish: () => null },
    { raw: raw as unknown as ServerResponse, headers: {} },
    new ClientCancel(),
    null,
    null,
  );
  return { log, raw, done };
}

describe.each([
  ['the relay', pipe],
  ['the per-event reference', pipeReference as typeof pipe],
])('%s, writes against upstream reads', (_name, relay) => {
  it('writes what the first read brought before it asks for the next read', async () => {
    const { log, done } = await relayed(relay, false);
    await done;
    const firstText = log.findIndex((line) => line.includes('"delta":"a"'));
    expect(firstText).toBeGreaterThanOrEqual(0);
    expect(firstText).toBeLessThan(log.indexOf('read 1'));
    expect(log.at(-1)).toBe('end');
  });

  it('does not read the upstream again while the client has not drained', async () => {
    const { log, raw, done } = await relayed(relay, true);
    await turns(20);
    expect(log).toContain('read 0');
    expect(log).not.toContain('read 1');
    raw.drainNow();
    await done;
    expect(log).toContain('read 2');
    expect(log.at(-1)).toBe('end');
  });
});
