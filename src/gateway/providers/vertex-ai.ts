// Vertex AI (Gemini models): POST {location}-aiplatform.googleapis.com/v1/projects/{project}/
// locations/{location}/publishers/google/models/{model}:generateContent (or
// :streamGenerateContent?alt=sse) with an OAuth2 access token as Bearer. Key encoding
// "PROJECT:LOCATION:ACCESS_TOKEN" or a baseUrl naming project and location (see contract.ts).
import { UpstreamError } from '../contract.ts';
import type { CompletionRequest, CompletionResult, ProviderAdapter, ProviderTarget, StreamEvent, UpstreamHeaders, UpstreamRequest } from '../contract.ts';
import { buildGenerateContentBody, parseGenerateContentResponse, parseGenerateContentStream, parseGoogleError } from './shared/gemini-content.ts';

const PROVIDER = 'vertex_ai';

export interface VertexCredentials {
  project: string | undefined;
  location: string | undefined;
  accessToken: string;
}

const SEGMENT = /^[A-Za-z0-9_.-]{1,128}$/;

/** Splits "PROJECT:LOCATION:TOKEN"; a key with fewer than two colons is the bare token. */
export function parseVertexKey(apiKey: string): VertexCredentials {
  const first = apiKey.indexOf(':');
  const second = first < 0 ? -1 : apiKey.indexOf(':', first + 1);
  if (second < 0) return { project: undefined, location: undefined, accessToken: apiKey };
  return { project: apiKey.slice(0, first), location: apiKey.slice(first + 1, second), accessToken: apiKey.slice(second + 1) };
}

export function vertexBaseUrl(target: ProviderTarget, credentials: VertexCredentials): string {
  if (target.baseUrl && target.baseUrl.includes('/projects/')) return target.baseUrl.replace(/\/$/, '');
  const project = target.extra?.project ?? credentials.project;
  const location = target.extra?.location ?? credentials.location ?? 'us-central1';
  if (project === undefined || !SEGMENT.test(project) || !SEGMENT.test(location)) {
    throw new UpstreamError({ provider: PROVIDER, status: null, code: 'bad_request', retryable: false, providerCode: 'vertex_project_required' });
  }
  const host = target.baseUrl?.replace(/\/$/, '') ?? (location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`);
  return `${host}/v1/projects/${project}/locations/${location}`;
}

export const vertex_ai = {
  id: PROVIDER,
  displayName: 'Google Vertex AI',
  defaultBaseUrl: 'https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}',
  streamFormat: 'sse',
  images: 'inline',
  buildRequest(request: CompletionRequest, target: ProviderTarget): UpstreamRequest {
    const credentials = parseVertexKey(target.apiKey);
    const model = request.model.includes('/') ? request.model : `publishers/google/models/${request.model}`;
    const method = request.stream ? ':streamGenerateContent?alt=sse' : ':generateContent';
    return {
      url: `${vertexBaseUrl(target, credentials)}/${model.split('/').map(encodeURIComponent).join('/')}${method}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: request.stream ? 'text/event-stream' : 'application/json', authorization: `Bearer ${credentials.accessToken}` },
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
