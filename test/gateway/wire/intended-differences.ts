/**
 * Field-level differences between what an official SDK sends and what svc sends for the same
 * logical request, each intended, with its reason. The SDK-differential suite fails on any
 * difference not listed here, and on any listed here that docs/providers.md does not list.
 * Key: "<provider> vs <sdk>"; `stream` limits an entry to streamed (true) or plain (false) calls.
 */
export interface Difference {
  field: string;
  kind: 'sdk_only' | 'svc_only' | 'value';
  sdk?: string;
  svc?: string;
}

export interface IntendedDifference {
  field: string;
  kind: Difference['kind'];
  stream?: boolean;
  reason: string;
}

export const INTENDED_DIFFERENCES: Record<string, IntendedDifference[]> = {
  'azure_openai vs openai (Azure v1 API)': [
    { field: 'header.authorization', kind: 'sdk_only', reason: 'the OpenAI SDK pointed at Azure v1 sends the resource key as a Bearer token; svc sends it as `api-key`, which both Azure API surfaces accept, so one stored key works for the classic and the v1 base URL' },
    { field: 'header.api-key', kind: 'svc_only', reason: 'see header.authorization: svc authenticates with `api-key` on both Azure surfaces' },
  ],
  'anthropic vs @anthropic-ai/sdk': [
    { field: 'body.temperature', kind: 'sdk_only', reason: 'API version 2026-10-21 (the default, as in the SDK) removed temperature: the SDK forwards it and the API answers 400; svc omits it (kept under an older anthropic_version for models that accept it)' },
    { field: 'header.authorization', kind: 'sdk_only', reason: 'the SDK 1.x sends an API key as `Authorization: Bearer`; svc keeps `x-api-key`, the header the API documents for keys on every version (including an older anthropic_version set per key)' },
    { field: 'header.x-api-key', kind: 'svc_only', reason: 'see header.authorization' },
  ],
  'vertex_ai vs @google/genai': [
    { field: 'path', kind: 'value', reason: 'the SDK calls the v1beta1 surface; svc calls the GA v1 surface (same generateContent body and stream format)' },
  ],
  'mistral vs @mistralai/mistralai': [
    { field: 'body.stream', kind: 'sdk_only', stream: false, reason: 'the SDK sends stream: false explicitly; svc omits the field when not streaming, as every other SDK does (false is the default)' },
  ],
};
