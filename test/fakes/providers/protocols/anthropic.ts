// Fake of the Anthropic Messages API: POST /v1/messages with x-api-key and anthropic-version;
// answers a message object or the named SSE events message_start … message_stop.
import { isRecord, sse, wordChunks } from '../types.ts';
import type { FakeBehaviour, FakeProtocol, ProtocolRequest, Validation } from '../types.ts';

const STOP: Record<FakeBehaviour['finish'], string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' };
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function usage(behaviour: FakeBehaviour) {
  return {
    input_tokens: behaviour.usage.prompt - (behaviour.usage.cached ?? 0),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: behaviour.usage.cached ?? 0,
    output_tokens: behaviour.usage.completion,
  };
}

export function anthropicProtocol(apiKey: string): FakeProtocol {
  return {
    validate(request: ProtocolRequest): Validation {
      const problems: string[] = [];
      if (request.method !== 'POST' || request.path !== '/v1/messages') problems.push(`route ${request.method} ${request.path}`);
      const authFailed = request.headers['x-api-key'] !== apiKey;
      if (authFailed) problems.push('x-api-key missing or wrong');
      if (!request.headers['anthropic-version']) problems.push('anthropic-version header missing');
      if (request.headers.authorization !== undefined) problems.push('unexpected authorization header');
      const body = request.body;
      if (!isRecord(body)) return { problems: [...problems, 'body is not a JSON object'], authFailed, stream: false, model: '' };
      if (typeof body.model !== 'string') problems.push('model missing');
      if (!Number.isInteger(body.max_tokens)) problems.push('max_tokens missing');
      if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) problems.push('bad system');
      const messages = Array.isArray(body.messages) ? body.messages : [];
      if (messages.length === 0) problems.push('messages missing');
      let previous = '';
      for (const message of messages) {
        if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant')) {
          problems.push('message role must be user or assistant');
          continue;
        }
        if (message.role === previous) problems.push('roles must alternate');
        previous = message.role;
        if (typeof message.content !== 'string' && !Array.isArray(message.content)) problems.push('bad content');
      }
      if (isRecord(messages[0]) && messages[0].role !== 'user') problems.push('first message must be user');
      for (const tool of Array.isArray(body.tools) ? body.tools : []) {
        if (!isRecord(tool) || typeof tool.name !== 'string' || !isRecord(tool.input_schema)) problems.push('bad tool');
      }
      return { problems, authFailed, stream: body.stream === true, model: String(body.model ?? '') };
    },
    error(status: number) {
      const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'error', error: { type, message: 'fake upstream error' } }) };
    },
    json(validation, _request, behaviour) {
      const content: unknown[] = [];
      if (behaviour.toolCall) {
        content.push({ type: 'text', text: 'Let me check.' });
        content.push({ type: 'tool_use', id: behaviour.toolCall.id ?? 'toolu_fake_1', name: behaviour.toolCall.name, input: JSON.parse(behaviour.toolCall.arguments) });
      } else {
        content.push({ type: 'text', text: behaviour.content });
      }
      return {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: behaviour.model ?? validation.model,
        content,
        stop_reason: behaviour.toolCall ? 'tool_use' : STOP[behaviour.finish],
        stop_sequence: null,
        usage: usage(behaviour),
      };
    },
    stream(validation, _request, behaviour) {
      const model = behaviour.model ?? validation.model;
      const startUsage = { ...usage(behaviour), output_tokens: 1 };
      const chunks: string[] = [
        sse({ type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } }, 'message_start'),
        sse({ type: 'ping' }, 'ping'),
      ];
      if (behaviour.toolCall) {
        const args = behaviour.toolCall.arguments;
        const half = Math.floor(args.length / 2);
        chunks.push(
          sse({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: behaviour.toolCall.id ?? 'toolu_fake_1', name: behaviour.toolCall.name, input: {} } }, 'content_block_start'),
          sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(0, half) } }, 'content_block_delta'),
          sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(half) } }, 'content_block_delta'),
        );
      } else {
        chunks.push(sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'));
        for (const word of wordChunks(behaviour.content)) chunks.push(sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } }, 'content_block_delta'));
      }
      chunks.push(sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'));
      const terminalFrom = chunks.length;
      chunks.push(
        sse({ type: 'message_delta', delta: { stop_reason: behaviour.toolCall ? 'tool_use' : STOP[behaviour.finish], stop_sequence: null }, usage: { output_tokens: behaviour.usage.completion } }, 'message_delta'),
        sse({ type: 'message_stop' }, 'message_stop'),
      );
      return { contentType: 'text/event-stream', chunks, terminalFrom, errorChunk: sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error') };
    },
  };
}
