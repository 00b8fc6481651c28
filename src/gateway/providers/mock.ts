// The built-in mock providers (`mock`, `mock_backup`): answer in process, with no account, so a
// newcomer can try completions, streaming, tool calls and failover. Available only when
// GATEWAY_MOCK_PROVIDER is on (default: development only). Deterministic:
// - the answer is "mock: " + the last user message (its images counted, not read);
// - with tools and a user message containing "[mock:tool]", it calls the first tool with {};
// - a user message containing "[mock:fail]" makes `mock` (never `mock_backup`) answer 503
//   overloaded, so routing with providers ["mock", "mock_backup"] shows retry then failover;
// - usage is estimated at 4 characters a token; the model is echoed back.
import { UpstreamError } from '../contract.ts';
import type { CompletionRequest, CompletionResult, ProviderAdapter, StreamEvent, TokenUsage, UpstreamError as UpstreamErrorType } from '../contract.ts';
import { usageOf } from './shared/common.ts';

const FAIL_MARKER = '[mock:fail]';
const TOOL_MARKER = '[mock:tool]';

function lastUserText(request: CompletionRequest): string {
  for (let index = request.messages.length - 1; index >= 0; index -= 1) {
    const message = request.messages[index]!;
    if (message.role === 'user') return message.content;
  }
  return '';
}

function usageFor(request: CompletionRequest, content: string): TokenUsage {
  let characters = 0;
  for (const message of request.messages) characters += message.content.length;
  return usageOf(Math.ceil(characters / 4) + 4 * request.messages.length, Math.ceil(content.length / 4));
}

function createMock(id: 'mock' | 'mock_backup', displayName: string): ProviderAdapter {
  const failure = (request: CompletionRequest): UpstreamErrorType | null =>
    id === 'mock' && request.messages.some((message) => message.role === 'user' && message.content.includes(FAIL_MARKER))
      ? new UpstreamError({ provider: id, status: 503, code: 'overloaded', providerCode: 'mock_failure' })
      : null;
  const answer = (request: CompletionRequest): CompletionResult => {
    const text = lastUserText(request);
    const images = request.messages.reduce((count, message) => count + (message.images?.length ?? 0), 0);
    const tool = request.tools?.[0];
    if (tool !== undefined && text.includes(TOOL_MARKER)) {
      return { content: '', finishReason: 'tool_calls', rawFinishReason: 'tool_calls', toolCalls: [{ id: 'call_mock_1', name: tool.name, arguments: '{}' }], usage: usageFor(request, '{}'), model: request.model };
    }
    const content = `mock: ${text}${images > 0 ? ` (${images} image${images === 1 ? '' : 's'})` : ''}`;
    return { content, finishReason: 'stop', rawFinishReason: 'stop', usage: usageFor(request, content), model: request.model };
  };
  const notHttp = (): never => {
    throw new UpstreamError({ provider: id, status: null, code: 'bad_request', retryable: false, providerCode: 'mock_is_local' });
  };
  return {
    id,
    displayName,
    defaultBaseUrl: null,
    streamFormat: 'sse',
    images: 'url',
    buildRequest: notHttp,
    parseResponse: notHttp,
    parseError: () => new UpstreamError({ provider: id, status: null, code: 'server' }),
    parseStream: notHttp,
    local: {
      async complete(request) {
        const error = failure(request);
        if (error !== null) throw error;
        return answer(request);
      },
      async stream(request) {
        const error = failure(request);
        if (error !== null) throw error;
        const result = answer(request);
        return (async function* (): AsyncGenerator<StreamEvent> {
          for (const piece of result.content.split(/(?<= )/)) if (piece.length > 0) yield { type: 'delta', text: piece };
          for (const [index, call] of (result.toolCalls ?? []).entries()) yield { type: 'tool_call_delta', index, id: call.id, name: call.name, argumentsDelta: call.arguments };
          yield { type: 'done', finishReason: result.finishReason, rawFinishReason: result.rawFinishReason, usage: result.usage, model: result.model };
        })();
      },
    },
  };
}

export const mock = createMock('mock', 'Built-in mock');
export const mock_backup = createMock('mock_backup', 'Built-in mock (failover target)');
