// Fake of OpenAI Chat Completions (and the vendors that speak it, including Azure OpenAI):
// validates path, auth header and body; answers chat.completion JSON or chat.completion.chunk SSE
// ending with `data: [DONE]`.
import { isRecord, sse, wordChunks } from '../types.ts';
import type { FakeBehaviour, FakeProtocol, ProtocolRequest, Validation } from '../types.ts';

export interface OpenAiFakeSettings {
  /** Exact path expected (e.g. /v1/chat/completions); for Azure a pattern check is used instead. */
  path: string;
  auth: 'bearer' | 'api-key';
  apiKey: string;
  /** Whether a streaming request must carry stream_options.include_usage. */
  requireStreamOptions: boolean;
  /** Mistral-style strictness: unknown body fields are a 422-style problem. */
  allowedFields?: readonly string[];
  azure?: boolean;
  /** Vendor reports usage in the finish chunk (Mistral) or x_groq.usage (Groq) instead of a usage chunk. */
  streamUsage: 'usage-chunk' | 'finish-chunk' | 'x-groq';
}

const FINISH: Record<FakeBehaviour['finish'], string> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls' };

function usageJson(behaviour: FakeBehaviour) {
  const usage: Record<string, unknown> = {
    prompt_tokens: behaviour.usage.prompt,
    completion_tokens: behaviour.usage.completion,
    total_tokens: behaviour.usage.prompt + behaviour.usage.completion,
  };
  if (behaviour.usage.cached !== undefined) usage.prompt_tokens_details = { cached_tokens: behaviour.usage.cached };
  if (behaviour.usage.reasoning !== undefined) usage.completion_tokens_details = { reasoning_tokens: behaviour.usage.reasoning };
  return usage;
}

export function openAiProtocol(settings: OpenAiFakeSettings): FakeProtocol {
  return {
    validate(request: ProtocolRequest): Validation {
      const problems: string[] = [];
      let authFailed = false;
      if (request.method !== 'POST') problems.push(`method ${request.method}`);
      if (settings.azure) {
        const match = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(request.path);
        if (!match) problems.push(`path ${request.path}`);
        if (!request.query.get('api-version')) problems.push('api-version query parameter missing');
      } else if (request.path !== settings.path) {
        problems.push(`path ${request.path}`);
      }
      if (settings.auth === 'bearer' && request.headers.authorization !== `Bearer ${settings.apiKey}`) authFailed = true;
      if (settings.auth === 'api-key') {
        if (request.headers['api-key'] !== settings.apiKey) authFailed = true;
        if (request.headers.authorization !== undefined) problems.push('azure request carries an authorization header');
      }
      if (authFailed) problems.push('credential missing or wrong');
      if (!request.headers['content-type']?.startsWith('application/json')) problems.push('content-type is not application/json');
      const body = request.body;
      if (!isRecord(body)) return { problems: [...problems, 'body is not a JSON object'], authFailed, stream: false, model: '' };
      if (!settings.azure && typeof body.model !== 'string') problems.push('model missing');
      if (!Array.isArray(body.messages) || body.messages.length === 0) problems.push('messages missing');
      for (const message of Array.isArray(body.messages) ? body.messages : []) {
        if (!isRecord(message) || !['system', 'user', 'assistant', 'tool', 'developer'].includes(String(message.role))) problems.push('bad message role');
        else if (message.role === 'tool' && typeof message.tool_call_id !== 'string') problems.push('tool message without tool_call_id');
      }
      if (body.stream !== undefined && typeof body.stream !== 'boolean') problems.push('stream is not boolean');
      if (body.tools !== undefined) {
        for (const tool of Array.isArray(body.tools) ? body.tools : [null]) {
          if (!isRecord(tool) || tool.type !== 'function' || !isRecord(tool.function) || typeof tool.function.name !== 'string') problems.push('bad tool');
        }
      }
      const stream = body.stream === true;
      if (stream && settings.requireStreamOptions) {
        if (!isRecord(body.stream_options) || body.stream_options.include_usage !== true) problems.push('stream_options.include_usage missing');
      }
      if (settings.allowedFields) {
        for (const key of Object.keys(body)) if (!settings.allowedFields.includes(key)) problems.push(`extra field ${key}`);
        for (const message of Array.isArray(body.messages) ? body.messages : []) {
          const allowed = isRecord(message) && message.role === 'tool' ? ['role', 'content', 'tool_call_id', 'name'] : ['role', 'content', 'tool_calls', 'prefix'];
          if (isRecord(message)) for (const key of Object.keys(message)) if (!allowed.includes(key)) problems.push(`extra message field ${key}`);
        }
      }
      const model = settings.azure ? decodeURIComponent(request.path.split('/')[3] ?? '') : String(body.model ?? '');
      return { problems, authFailed, stream, model };
    },
    error(status: number) {
      const type = status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_api_key' : status >= 500 ? 'server_error' : 'invalid_request_error';
      return {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: { message: 'fake upstream error', type, param: null, code: type } }),
      };
    },
    json(validation, _request, behaviour) {
      const message: Record<string, unknown> = { role: 'assistant', content: behaviour.toolCall ? null : behaviour.content, refusal: null };
      if (behaviour.toolCall) {
        message.tool_calls = [{ id: behaviour.toolCall.id ?? 'call_fake_1', type: 'function', function: { name: behaviour.toolCall.name, arguments: behaviour.toolCall.arguments } }];
      }
      return {
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: behaviour.model ?? validation.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: behaviour.toolCall ? 'tool_calls' : FINISH[behaviour.finish] }],
        usage: usageJson(behaviour),
      };
    },
    stream(validation, _request, behaviour) {
      const model = behaviour.model ?? validation.model;
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model };
      const chunks: string[] = [];
      if (settings.azure) chunks.push(sse({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [] }));
      chunks.push(sse({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }));
      if (behaviour.toolCall) {
        const args = behaviour.toolCall.arguments;
        const half = Math.floor(args.length / 2);
        chunks.push(
          sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: behaviour.toolCall.id ?? 'call_fake_1', type: 'function', function: { name: behaviour.toolCall.name, arguments: '' } }] }, finish_reason: null }] }),
          sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }, finish_reason: null }] }),
          sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }, finish_reason: null }] }),
        );
      } else {
        for (const word of wordChunks(behaviour.content)) chunks.push(sse({ ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] }));
      }
      const terminalFrom = chunks.length;
      const finish = behaviour.toolCall ? 'tool_calls' : FINISH[behaviour.finish];
      if (settings.streamUsage === 'finish-chunk') {
        chunks.push(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage: usageJson(behaviour) }));
      } else if (settings.streamUsage === 'x-groq') {
        chunks.push(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], x_groq: { id: 'req_fake', usage: usageJson(behaviour) } }));
      } else {
        chunks.push(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] }));
        chunks.push(sse({ ...base, choices: [], usage: usageJson(behaviour) }));
      }
      chunks.push(sse('[DONE]'));
      return { contentType: 'text/event-stream', chunks, terminalFrom, errorChunk: sse({ error: { message: 'fake in-stream error', type: 'server_error', code: 'server_error' } }) };
    },
  };
}
