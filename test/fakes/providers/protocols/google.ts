// Fake of Google's generateContent protocol: the Gemini API (x-goog-api-key,
// /v1beta/models/{model}:generateContent | :streamGenerateContent?alt=sse) and Vertex AI
// (Bearer token, /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:…).
import { isRecord, sse, wordChunks } from '../types.ts';
import type { FakeBehaviour, FakeProtocol, ProtocolRequest, Validation } from '../types.ts';

const FINISH: Record<FakeBehaviour['finish'], string> = { stop: 'STOP', length: 'MAX_TOKENS', tool_calls: 'STOP' };
const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export interface GoogleFakeSettings {
  flavour: 'gemini' | 'vertex';
  apiKey: string;
  project?: string;
  location?: string;
}

function usageMetadata(behaviour: FakeBehaviour) {
  const metadata: Record<string, unknown> = {
    promptTokenCount: behaviour.usage.prompt,
    candidatesTokenCount: behaviour.usage.completion - (behaviour.usage.reasoning ?? 0),
    totalTokenCount: behaviour.usage.prompt + behaviour.usage.completion,
  };
  if (behaviour.usage.cached !== undefined) metadata.cachedContentTokenCount = behaviour.usage.cached;
  if (behaviour.usage.reasoning !== undefined) metadata.thoughtsTokenCount = behaviour.usage.reasoning;
  return metadata;
}

export function googleProtocol(settings: GoogleFakeSettings): FakeProtocol {
  const prefix = settings.flavour === 'gemini' ? '/v1beta/models/' : `/v1/projects/${settings.project}/locations/${settings.location}/publishers/google/models/`;
  return {
    validate(request: ProtocolRequest): Validation {
      const problems: string[] = [];
      let model = '';
      let stream = false;
      if (request.method !== 'POST' || !request.path.startsWith(prefix)) problems.push(`route ${request.method} ${request.path}`);
      else {
        const rest = decodeURIComponent(request.path.slice(prefix.length));
        const colon = rest.lastIndexOf(':');
        model = rest.slice(0, colon);
        const method = rest.slice(colon + 1);
        if (method === 'streamGenerateContent') {
          stream = true;
          if (request.query.get('alt') !== 'sse') problems.push('streaming without alt=sse');
        } else if (method !== 'generateContent') problems.push(`method ${method}`);
      }
      if (request.query.has('key')) problems.push('API key sent in the URL');
      const authFailed =
        settings.flavour === 'gemini' ? request.headers['x-goog-api-key'] !== settings.apiKey : request.headers.authorization !== `Bearer ${settings.apiKey}`;
      if (authFailed) problems.push('credential missing or wrong');
      const body = request.body;
      if (!isRecord(body)) return { problems: [...problems, 'body is not a JSON object'], authFailed, stream, model };
      const contents = Array.isArray(body.contents) ? body.contents : [];
      if (contents.length === 0) problems.push('contents missing');
      for (const content of contents) {
        if (!isRecord(content) || (content.role !== 'user' && content.role !== 'model') || !Array.isArray(content.parts) || content.parts.length === 0) problems.push('bad content');
      }
      if (body.systemInstruction !== undefined && !(isRecord(body.systemInstruction) && Array.isArray(body.systemInstruction.parts))) problems.push('bad systemInstruction');
      if (JSON.stringify(body).includes('"role":"system"')) problems.push('system role inside contents');
      for (const tool of Array.isArray(body.tools) ? body.tools : []) {
        if (!isRecord(tool) || !Array.isArray(tool.functionDeclarations)) problems.push('bad tool');
      }
      return { problems, authFailed, stream, model };
    },
    error(status: number) {
      return {
        headers: { 'content-type': 'application/json; charset=UTF-8' },
        body: JSON.stringify({
          error: {
            code: status,
            message: 'fake upstream error',
            status: STATUS[status] ?? 'UNKNOWN',
            ...(status === 429 ? { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] } : {}),
          },
        }),
      };
    },
    json(validation, _request, behaviour) {
      const parts: unknown[] = [];
      if (behaviour.usage.reasoning !== undefined) parts.push({ text: 'thinking about it', thought: true });
      if (behaviour.toolCall) parts.push({ functionCall: { name: behaviour.toolCall.name, args: JSON.parse(behaviour.toolCall.arguments) } });
      else parts.push({ text: behaviour.content });
      return {
        candidates: [{ content: { role: 'model', parts }, finishReason: FINISH[behaviour.finish], index: 0 }],
        usageMetadata: usageMetadata(behaviour),
        modelVersion: behaviour.model ?? validation.model,
        responseId: 'fake-response',
      };
    },
    stream(validation, _request, behaviour) {
      const modelVersion = behaviour.model ?? validation.model;
      const chunks: string[] = [];
      if (behaviour.toolCall) {
        chunks.push(sse({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: behaviour.toolCall.name, args: JSON.parse(behaviour.toolCall.arguments) } }] }, index: 0 }], modelVersion }));
      } else {
        for (const word of wordChunks(behaviour.content)) {
          chunks.push(sse({ candidates: [{ content: { role: 'model', parts: [{ text: word }] }, index: 0 }], usageMetadata: { promptTokenCount: behaviour.usage.prompt }, modelVersion }));
        }
      }
      const terminalFrom = chunks.length;
      chunks.push(sse({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: FINISH[behaviour.finish], index: 0 }], usageMetadata: usageMetadata(behaviour), modelVersion }));
      return { contentType: 'text/event-stream', chunks, terminalFrom, errorChunk: sse({ error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }) };
    },
  };
}
