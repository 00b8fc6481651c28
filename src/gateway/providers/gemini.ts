// Gemini API (Google AI Studio): POST /v1beta/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse; key in the x-goog-api-key header (never in the URL).
import type { CompletionRequest, CompletionResult, ProviderAdapter, ProviderTarget, StreamEvent, UpstreamHeaders, UpstreamRequest } from '../contract.ts';
import { joinUrl } from './shared/common.ts';
import { buildGenerateContentBody, parseGenerateContentResponse, parseGenerateContentStream, parseGoogleError } from './shared/gemini-content.ts';

const PROVIDER = 'gemini';
const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

export const gemini = {
  id: PROVIDER,
  displayName: 'Google Gemini',
  defaultBaseUrl: DEFAULT_BASE_URL,
  streamFormat: 'sse',
  images: 'inline',
  buildRequest(request: CompletionRequest, target: ProviderTarget): UpstreamRequest {
    const model = request.model.startsWith('models/') ? request.model.slice('models/'.length) : request.model;
    const method = request.stream ? ':streamGenerateContent?alt=sse' : ':generateContent';
    return {
      url: joinUrl(target.baseUrl ?? DEFAULT_BASE_URL, `/models/${encodeURIComponent(model)}${method}`),
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: request.stream ? 'text/event-stream' : 'application/json', 'x-goog-api-key': target.apiKey },
      body: JSON.stringify(buildGenerateContentBody(request, PROVIDER)),
    };
  },
  parseResponse(status: number, headers: UpstreamHeaders, bodyText: string, requestedModel?: string): CompletionResult {
    if (status < 200 || status > 299) throw parseGoogleError(PROVIDER, status, headers, bodyText);
    return parseGenerateContentResponse(PROVIDER, bodyText, requestedModel);
  },
  parseError: (status: number, headers: UpstreamHeaders, bodyText: string) => parseGoogleError(PROVIDER, status, headers, bodyText),
  parseStream: (body: AsyncIterable<Uint8Array>): AsyncIterable<StreamEvent> => parseGenerateContentStream(PROVIDER, body),
} satisfies ProviderAdapter;
