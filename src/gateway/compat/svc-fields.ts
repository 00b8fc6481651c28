/**
 * svc's own completion fields that the compatible surfaces accept beside their API's (clients
 * send them as extra body fields, e.g. the OpenAI SDK's `extra_body`): verification's inputs.
 */
import { Type } from '@sinclair/typebox';
import { LIMITS, SourceSchema, type CompletionBody } from '../schemas.ts';

export const SVC_FIELDS = {
  conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  sources: Type.Optional(Type.Array(SourceSchema, { maxItems: LIMITS.sources })),
  response_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
};

/** Copies svc's fields of a compatible request onto svc's completion body. */
export function copySvcFields(request: Pick<CompletionBody, 'conversation_id' | 'sources' | 'response_schema'>, body: CompletionBody): void {
  if (request.conversation_id !== undefined) body.conversation_id = request.conversation_id;
  if (request.sources !== undefined) body.sources = request.sources;
  if (request.response_schema !== undefined) body.response_schema = request.response_schema;
}
