// Fake of the Cohere Chat API v2: POST /v2/chat with a Bearer key; answers the v2 chat response
// or its SSE events (message-start, content-start, content-delta, content-end, message-end).
import { isRecord, sse, wordChunks } from '../types.ts';
import type { FakeBehaviour, FakeProtocol, ProtocolRequest, Validation } from '../types.ts';

const FINISH: Record<FakeBehaviour['finish'], string> = { stop: 'COMPLETE', length: 'MAX_TOKENS', tool_calls: 'TOOL_CALL' };

function usage(behaviour: FakeBehaviour) {
  return {
    billed_units: { input_tokens: behaviour.usage.prompt, output_tokens: behaviour.usage.completion },
    tokens: { input_tokens: behaviour.usage.prompt, output_tokens: behaviour.usage.completion },
    ...(behaviour.usage.cached === undefined ? {} : { cached_tokens: behaviour.usage.cached }),
  };
}

export function cohereProtocol(apiKey: string): FakeProtocol {
  return {
    validate(request: ProtocolRequest): Validation {
      const problems: string[] = [];
      if (request.method !== 'POST' || request.path !== '/v2/chat') problems.push(`route ${request.method} ${request.path}`);
      const authFailed = request.headers.authorization !== `Bearer ${apiKey}`;
      if (authFailed) problems.push('credential missing or wrong');
      const body = request.body;
      if (!isRecord(body)) return { problems: [...problems, 'body is not a JSON object'], authFailed, stream: false, model: '' };
      if (typeof body.model !== 'string') problems.push('model missing');
      const messages = Array.isArray(body.messages) ? body.messages : [];
      if (messages.length === 0) problems.push('messages missing');
      for (const message of messages) {
        if (!isRecord(message) || !['system', 'user', 'assistant', 'tool'].includes(String(message.role))) problems.push('bad message role');
        else if (message.role === 'tool' && typeof message.tool_call_id !== 'string') problems.push('tool message without tool_call_id');
      }
      for (const key of ['stream_options', 'n', 'max_completion_tokens']) if (key in body) problems.push(`unsupported field ${key}`);
      return { problems, authFailed, stream: body.stream === true, model: String(body.model ?? '') };
    },
    error() {
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'fake-error', message: 'fake upstream error' }) };
    },
    json(_validation, _request, behaviour) {
      const message: Record<string, unknown> = { role: 'assistant' };
      if (behaviour.toolCall) {
        message.tool_plan = 'I will call the tool.';
        message.tool_calls = [{ id: behaviour.toolCall.id ?? 'call_fake_1', type: 'function', function: { name: behaviour.toolCall.name, arguments: behaviour.toolCall.arguments } }];
      } else {
        message.content = [{ type: 'text', text: behaviour.content }];
      }
      return { id: 'fake-chat', finish_reason: behaviour.toolCall ? 'TOOL_CALL' : FINISH[behaviour.finish], message, usage: usage(behaviour) };
    },
    stream(_validation, _request, behaviour) {
      const chunks: string[] = [sse({ id: 'fake-chat', type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } }, 'message-start')];
      if (behaviour.toolCall) {
        const args = behaviour.toolCall.arguments;
        const half = Math.floor(args.length / 2);
        chunks.push(
          sse({ type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: behaviour.toolCall.id ?? 'call_fake_1', type: 'function', function: { name: behaviour.toolCall.name, arguments: '' } } } } }, 'tool-call-start'),
          sse({ type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: args.slice(0, half) } } } } }, 'tool-call-delta'),
          sse({ type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: args.slice(half) } } } } }, 'tool-call-delta'),
          sse({ type: 'tool-call-end', index: 0 }, 'tool-call-end'),
        );
      } else {
        chunks.push(sse({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } }, 'content-start'));
        for (const word of wordChunks(behaviour.content)) chunks.push(sse({ type: 'content-delta', index: 0, delta: { message: { content: { text: word } } } }, 'content-delta'));
        chunks.push(sse({ type: 'content-end', index: 0 }, 'content-end'));
      }
      const terminalFrom = chunks.length;
      chunks.push(sse({ type: 'message-end', delta: { finish_reason: behaviour.toolCall ? 'TOOL_CALL' : FINISH[behaviour.finish], usage: usage(behaviour) } }, 'message-end'));
      return { contentType: 'text/event-stream', chunks, terminalFrom, errorChunk: sse({ type: 'message-end', delta: { finish_reason: 'ERROR', error: 'fake in-stream error' } }, 'message-end') };
    },
  };
}
