/**
 * Scripted stand-ins for the provider registry's invoke entry points, for tests of the gateway
 * core that need precise control (failure sequences, timing). End-to-end tests against the fake
 * upstream servers live in completions-e2e.test.ts.
 */
import { UpstreamError } from '../../src/gateway/contract.ts';
import type { CompletionRequest, CompletionResult, ProviderTarget, StreamEvent } from '../../src/gateway/contract.ts';
import type { Invokers } from '../../src/gateway/index.ts';

export type Behaviour =
  | { kind: 'ok'; content?: string; promptTokens?: number; completionTokens?: number; delayMs?: number }
  | { kind: 'fail'; code: UpstreamError['code']; status: number | null; retryAfterMs?: number }
  | { kind: 'stream-break-after'; chunks: string[] };

export interface ScriptedCall {
  provider: string;
  request: CompletionRequest;
  target: ProviderTarget;
}

export function scriptedInvokers(initial: Record<string, Behaviour> = {}) {
  const behaviours = new Map<string, Behaviour[] | Behaviour>(Object.entries(initial));
  const calls: ScriptedCall[] = [];
  const next = (provider: string): Behaviour => {
    const entry = behaviours.get(provider) ?? { kind: 'ok' };
    if (Array.isArray(entry)) return entry.length > 1 ? entry.shift()! : entry[0]!;
    return entry;
  };
  const fail = (provider: string, behaviour: Extract<Behaviour, { kind: 'fail' }>) =>
    new UpstreamError({ provider, status: behaviour.status, code: behaviour.code, retryAfterMs: behaviour.retryAfterMs ?? null });

  const invokers: Invokers = {
    async completion(provider, request, target, options = {}): Promise<CompletionResult> {
      calls.push({ provider, request, target });
      const behaviour = next(provider);
      if (behaviour.kind === 'fail') throw fail(provider, behaviour);
      if (behaviour.kind === 'ok' && behaviour.delayMs) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, behaviour.delayMs);
          options.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new UpstreamError({ provider, status: null, code: 'network' }));
          });
        });
      }
      const content = behaviour.kind === 'ok' ? (behaviour.content ?? `echo: ${request.messages.at(-1)?.content ?? ''}`) : '';
      const promptTokens = behaviour.kind === 'ok' ? (behaviour.promptTokens ?? 10) : 10;
      const completionTokens = behaviour.kind === 'ok' ? (behaviour.completionTokens ?? 5) : 5;
      return { content, finishReason: 'stop', rawFinishReason: 'stop', usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens }, model: request.model };
    },
    async stream(provider, request, target): Promise<AsyncIterable<StreamEvent>> {
      calls.push({ provider, request, target });
      const behaviour = next(provider);
      if (behaviour.kind === 'fail') throw fail(provider, behaviour);
      const chunks = behaviour.kind === 'stream-break-after' ? behaviour.chunks : (behaviour.content ?? `echo: ${request.messages.at(-1)?.content ?? ''}`).split(/(?<= )/);
      return (async function* () {
        for (const text of chunks) yield { type: 'delta', text } as StreamEvent;
        if (behaviour.kind === 'stream-break-after') throw new UpstreamError({ provider, status: null, code: 'network' });
        yield { type: 'done', finishReason: 'stop', rawFinishReason: 'stop', usage: { promptTokens: 10, completionTokens: chunks.length, totalTokens: 10 + chunks.length }, model: request.model } as StreamEvent;
      })();
    },
  };
  return {
    invokers,
    calls,
    set(provider: string, behaviour: Behaviour | Behaviour[]) {
      behaviours.set(provider, behaviour);
    },
  };
}
