/**
 * The relay takes one upstream read's events together and writes what they produce with one
 * write (issue #39 item 2, speed-stream39 round), where it used to await and write each event on
 * its own. These tests keep the relay it replaced (base 07306fb), verbatim, as the reference and
 * feed both the same upstream bytes cut at every boundary: the client must receive the same
 * bytes (status, headers, body), the stream must be settled the same way, and the upstream read
 * and closed at the same points — with a response-filter leak mid-stream or at the end,
 * verification's hold-back, stops and cut-stream verdicts, PII placeholders restored across
 * deltas, tool calls, upstream errors and cut streams, a client that leaves between reads, and a
 * socket that pushes back on every write.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ResponseGuard } from '../detection/index.ts';
import { SvcError } from '../platform/errors.ts';
import { pipeReference } from '../../test/support/relay-reference.ts';
import type { PreparedCompletion } from './admission.ts';
import { ClientCancel } from './cancel.ts';
import { anthropicStreamEncoder } from './compat/anthropic.ts';
import { openAiStreamEncoder } from './compat/openai.ts';
import { UpstreamError, type StreamEvent } from './contract.ts';
import { createStreamRestorer } from './pii/index.ts';
import { openai } from './providers/openai.ts';
import { pipe, type OpenedStream, type StreamEncoder, type StreamTarget } from './relay.ts';
import type { StreamVerifier, VerifierStop } from './verifier.ts';

// ---- Upstream answers (OpenAI chunks, parsed by the real adapter). ----

const encoded = new TextEncoder();
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const answer = (deltas: readonly string[], end: 'done' | 'cut' | 'error' | 'invalid' | 'no-done' = 'done', errorAfter = Math.floor(deltas.length / 2)): Uint8Array => {
  let text = chunk({ role: 'assistant', content: '' });
  deltas.forEach((delta, index) => {
    text += chunk({ content: delta });
    if (index === errorAfter && end === 'error') text += `data: ${JSON.stringify({ error: { code: 'server_overloaded', message: 'secret upstream text' } })}\n\n`;
    if (index === errorAfter && end === 'invalid') text += 'data: {"choices": [\n\n';
  });
  if (end === 'done' || end === 'no-done') text += chunk({}, 'stop') + `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 } })}\n\n`;
  if (end === 'done') text += 'data: [DONE]\n\n';
  return encoded.encode(text);
};
const toolAnswer = (): Uint8Array => {
  let text = chunk({ role: 'assistant', content: 'Checking ' });
  text += chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] });
  text += chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] });
  text += chunk({ tool_calls: [{ index: 0, function: { arguments: '"Zürich"}' } }] });
  text += chunk({}, 'tool_calls') + 'data: [DONE]\n\n';
  return encoded.encode(text);
};

const PLAIN = ['Héllo', ' wörld', ' — ', '👋🏽', ' a', ' fine', ' day', '.'];
const CASES: Array<{ name: string; bytes: Uint8Array }> = [
  { name: 'a plain answer', bytes: answer(PLAIN) },
  { name: 'a leak in the middle', bytes: answer(['The ', 'code ', 'is ', 'LE', 'AK', 'ED ', 'now', '.']) },
  { name: 'a leak in one delta', bytes: answer(['The ', 'word ', 'LEAK', ' here', '.']) },
  { name: 'a leak found at the end', bytes: answer(['All ', 'clear ', 'but ', 'END', 'LEAK', '.']) },
  { name: 'a verification stop in the middle', bytes: answer(['Some ', 'text ', 'then ', 'ST', 'OP ', 'and ', 'more', '.']) },
  { name: 'a verification stop at the end', bytes: answer(['Looks ', 'fine ', 'until ', 'FIN', 'ALX', '.']) },
  { name: 'PII placeholders across deltas', bytes: answer(['Mail ', '[EMA', 'IL_1', '] or ', '[PHONE_', '2]', ' and [x', '] [EMAIL_1]']) },
  { name: 'a placeholder held at the end', bytes: answer(['Mail ', 'me at ', '[EMAIL_']) },
  { name: 'tool calls', bytes: toolAnswer() },
  { name: 'an upstream error event mid-stream', bytes: answer(PLAIN, 'error') },
  { name: 'an invalid chunk mid-stream', bytes: answer(PLAIN, 'invalid') },
  { name: 'a stream cut before it finished', bytes: answer(PLAIN, 'cut') },
  { name: 'a finished stream closed without [DONE]', bytes: answer(PLAIN, 'no-done') },
  { name: 'a leak right before an upstream error', bytes: answer(['a', 'b', 'LEAK', 'c'], 'error', 3) },
];

// ---- The relay's surroundings, deterministic. ----

interface Options {
  guard: boolean;
  verifier: 'off' | 'hold' | 'pass';
  pii: boolean;
  backpressure: boolean;
  /** The client leaves before this upstream read reaches svc (0: before the first). */
  leaveAt?: number | undefined;
  encoder: 'svc' | 'openai' | 'anthropic';
}

class FakeResponse extends EventEmitter {
  destroyed = false;
  writableFinished = false;
  head = '';
  body = '';
  writes = 0;
  constructor(private readonly backpressure: boolean) {
    super();
  }
  writeHead(status: number, headers: Record<string, unknown>): this {
    this.head = JSON.stringify([status, headers]);
    return this;
  }
  write(text: string): boolean {
    if (this.destroyed || this.writableFinished) return false;
    this.body += text;
    this.writes++;
    if (!this.backpressure) return true;
    setImmediate(() => this.emit('drain'));
    return false;
  }
  end(text = ''): this {
    if (text !== '') this.write(text);
    this.writableFinished = true;
    this.body += '<end>';
    return this;
  }
  leave(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

function fakeGuard(): ResponseGuard {
  let seen = '';
  return {
    push(delta) {
      seen += delta;
      if (seen.includes('LEAK') && !seen.includes('ENDLEAK')) throw new SvcError('THREAT_BLOCKED', { details: { at: seen.length } });
    },
    async finish(content, current) {
      await Promise.resolve();
      if (content.includes('ENDLEAK')) throw new SvcError('THREAT_BLOCKED', { details: { at: 'end' } });
      return { ...current, checked: content.length };
    },
  };
}

/** A verifier that holds back (`hold`) or releases at once (`pass`), stops on STOP while streaming and on FINALX at the end. */
function fakeVerifier(hold: boolean): StreamVerifier {
  let held = '';
  let total = '';
  const stop = (at: string): VerifierStop => ({ code: 'VERIFICATION_BLOCKED', verification: { status: 'failed', at, length: total.length } });
  return {
    push(text) {
      total += text;
      if (total.includes('STOP')) return { release: '', stop: stop('stream') };
      held += text;
      const keep = hold ? Math.min(held.length, 6) : 0;
      const release = held.slice(0, held.length - keep);
      held = held.slice(held.length - keep);
      return { release, stop: null };
    },
    async end(outcome) {
      await new Promise((resolve) => setImmediate(resolve));
      if (total.includes('FINALX')) return { release: '', stop: stop('end'), verification: null };
      const release = held;
      held = '';
      return { release, stop: null, verification: { status: 'verified', finish: outcome.finishReason, cut: outcome.cut === true } };
    },
  };
}

/** The upstream body as reads of `bytes` cut at `cuts`, each read one macrotask later; reads and the close go to `log`. */
function upstream(bytes: Uint8Array, cuts: readonly number[], log: string[], beforeRead: (index: number) => void): AsyncIterable<Uint8Array> {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].filter((cut) => cut > 0 && cut < bytes.length).sort((a, b) => a - b);
  const reads: Uint8Array[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    reads.push(bytes.subarray(start, point));
    start = point;
  }
  return {
    [Symbol.asyncIterator]() {
      let index = 0;
      return {
        next: async () => {
          await new Promise((resolve) => setImmediate(resolve));
          beforeRead(index);
          log.push(`read ${index}`);
          return index < reads.length ? { done: false, value: new Uint8Array(reads[index++]!) } : { done: true, value: undefined };
        },
        return: async () => {
          log.push('closed');
          return { done: true, value: undefined };
        },
      };
    },
  };
}

type Pipe = typeof pipe;

/** Everything the client and the service's books see of one relayed stream. */
async function relayed(relay: Pipe, bytes: Uint8Array, cuts: readonly number[], options: Options): Promise<Record<string, unknown>> {
  const log: string[] = [];
  const raw = new FakeResponse(options.backpressure);
  const cancel = new ClientCancel();
  raw.once('close', () => {
    if (!raw.writableFinished) cancel.abort(new Error('client disconnected'));
  });
  const body = upstream(bytes, cuts, log, (index) => {
    if (index === options.leaveAt) raw.leave();
  });
  const rest = openai.parseStream(body, 'gpt-4o-mini')[Symbol.asyncIterator]();
  let first: IteratorResult<StreamEvent>;
  try {
    first = await rest.next();
  } catch (error) {
    return { opened: false, error: error instanceof UpstreamError ? error.providerCode : String(error), log };
  }
  if (first.done === true) return { opened: false, log };
  const mapping = new Map([
    ['[EMAIL_1]', 'ada@example.org'],
    ['[PHONE_2]', '+41 44 000 00 00'],
  ]);
  const prepared = {
    caller: { requestId: 'req_1', orgId: 'org_1' },
    request: { messages: [{ role: 'user', content: 'hi' }] },
    settings: { piiRestore: options.pii },
    redaction: options.pii ? { mapping, summary: { mode: 'placeholder', redacted: ['email'], total: 2 } } : null,
    startedAt: performance.now(),
  } as unknown as PreparedCompletion;
  const finishes: unknown[] = [];
  const opened: OpenedStream = {
    provider: 'openai',
    model: 'gpt-4o-mini',
    served: { provider: 'openai', model: 'gpt-4o-mini', passedOver: [], attempts: 1 },
    first: first.value,
    rest,
    restore: options.pii ? createStreamRestorer(mapping) : { push: (delta) => delta, flush: () => '' },
    finish(outcome) {
      finishes.push({ kind: outcome.kind, content: outcome.content, ...(outcome.kind === 'error' ? { error: outcome.error instanceof UpstreamError ? outcome.error.providerCode : String(outcome.error) } : {}) });
      if (outcome.kind !== 'done') return null;
      return { usage: outcome.event.usage ?? { promptTokens: 1, completionTokens: 2, totalTokens: 3 }, costUsd: 0.25 };
    },
  };
  const encoder: StreamEncoder | undefined =
    options.encoder === 'openai' ? openAiStreamEncoder('req_1', 'gpt-4o-mini', true) : options.encoder === 'anthropic' ? anthropicStreamEncoder('req_1', 'claude') : undefined;
  const target: StreamTarget = { raw: raw as unknown as ServerResponse, headers: { 'x-request-id': 'req_1' }, ...(encoder === undefined ? {} : { encoder }) };
  const guard = options.guard ? fakeGuard() : null;
  const verifying = options.verifier === 'off' ? null : fakeVerifier(options.verifier === 'hold');
  await relay(prepared, opened, target, cancel, guard, verifying);
  return {
    head: raw.head,
    // Times differ between runs; nothing else may.
    body: raw.body.replace(/"latency_ms":[0-9.e-]+/g, '"latency_ms":0').replace(/"created":\d+/g, '"created":0'),
    finishes,
    log,
    aborted: cancel.aborted,
  };
}

const OPTIONS: Options[] = [
  { guard: false, verifier: 'off', pii: false, backpressure: false, encoder: 'svc' },
  { guard: true, verifier: 'off', pii: false, backpressure: false, encoder: 'svc' },
  { guard: true, verifier: 'hold', pii: true, backpressure: false, encoder: 'svc' },
  { guard: false, verifier: 'pass', pii: false, backpressure: true, encoder: 'svc' },
  { guard: true, verifier: 'hold', pii: false, backpressure: true, encoder: 'openai' },
  { guard: true, verifier: 'off', pii: true, backpressure: false, encoder: 'anthropic' },
  { guard: true, verifier: 'hold', pii: true, backpressure: false, encoder: 'svc', leaveAt: 2 },
];
const EVERY_CUT = [2, 4, 6];

describe('the stream relay, one write per upstream read', () => {
  it.each(CASES)('gives the client the same bytes as event-by-event relaying for $name, cut at every byte', async ({ bytes }) => {
    for (const [which, options] of OPTIONS.entries()) {
      const whole = await relayed(pipe, bytes, [], options);
      expect(whole, JSON.stringify(options)).toStrictEqual(await relayed(pipeReference, bytes, [], options));
      // One cut at each byte for the option sets that carry every guard, back-pressure, a leaving client.
      if (!EVERY_CUT.includes(which)) continue;
      for (let cut = 1; cut < bytes.length; cut++) {
        expect(await relayed(pipe, bytes, [cut], options), `cut at byte ${cut}, ${JSON.stringify(options)}`).toStrictEqual(await relayed(pipeReference, bytes, [cut], options));
      }
    }
    for (const options of OPTIONS) {
      const everyByte = Array.from({ length: bytes.length }, (_, index) => index);
      expect(await relayed(pipe, bytes, everyByte, options), `every byte, ${JSON.stringify(options)}`).toStrictEqual(await relayed(pipeReference, bytes, everyByte, options));
    }
  }, 120_000);

  it('gives the client the same bytes for random cuts, guards, encoders and a client that leaves between reads', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: CASES.length - 1 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.record({
          guard: fc.boolean(),
          verifier: fc.constantFrom('off' as const, 'hold' as const, 'pass' as const),
          pii: fc.boolean(),
          backpressure: fc.boolean(),
          leaveAt: fc.option(fc.nat(12), { nil: undefined }),
          encoder: fc.constantFrom('svc' as const, 'openai' as const, 'anthropic' as const),
        }),
        async (which, cuts, options) => {
          const { bytes } = CASES[which]!;
          expect(await relayed(pipe, bytes, cuts, options)).toStrictEqual(await relayed(pipeReference, bytes, cuts, options));
        },
      ),
      { numRuns: 400 },
    );
  }, 120_000);

  it('writes a read of many events with one write, and a leak stops before any byte of the delta that completes it', async () => {
    const bytes = answer(['The ', 'code ', 'is ', 'LE', 'AK', 'ED ', 'now', '.']);
    const raw = await relayed(pipe, bytes, [], { guard: true, verifier: 'off', pii: false, backpressure: false, encoder: 'svc' });
    const body = String(raw.body);
    expect(body).toContain('"delta":"LE"');
    expect(body).not.toContain('"delta":"AK"');
    expect(body).toContain('"code":"THREAT_BLOCKED"');
    const plain = new FakeResponse(false);
    const rest = openai.parseStream(
      upstream(answer(PLAIN), [], [], () => undefined),
      'gpt-4o-mini',
    )[Symbol.asyncIterator]();
    const first = await rest.next();
    const prepared = { caller: { requestId: 'req_1' }, request: { messages: [] }, settings: { piiRestore: false }, redaction: null, startedAt: performance.now() } as unknown as PreparedCompletion;
    await pipe(
      prepared,
      { provider: 'openai', model: 'm', served: { provider: 'openai', model: 'm', passedOver: [], attempts: 1 }, first: first.value as StreamEvent, rest, restore: { push: (delta) => delta, flush: () => '' }, finish: () => null },
      { raw: plain as unknown as ServerResponse, headers: {} },
      new ClientCancel(),
      null,
      null,
    );
    // The whole answer came in one read: its deltas and the final event leave in one write.
    expect(plain.writes).toBe(1);
    expect(plain.body).toContain('data: [DONE]');
  });
});
