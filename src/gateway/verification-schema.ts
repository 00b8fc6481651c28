/** Shape of the `verification` object (issue #18), kept here so the completion response schema can name it. */
import { Type } from '@sinclair/typebox';

const FindingSchema = Type.Object({ start: Type.Integer(), end: Type.Integer(), reason: Type.String(), detail: Type.Optional(Type.String()) });
const LayerSchema = Type.Object({
  verdict: Type.Union([Type.Literal('pass'), Type.Literal('fail'), Type.Literal('skipped'), Type.Literal('error')]),
  score: Type.Number({ minimum: 0, maximum: 1 }),
  findings: Type.Array(FindingSchema),
  ms: Type.Number(),
  fails: Type.Union([Type.Literal('open'), Type.Literal('closed')]),
  info: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
/**
 * The `verification` object of completions (JSON and the stream's final event) and of the guard
 * API (POST /api/v1/verify). Documented in docs/verification.md.
 */
export const VerificationSchema = Type.Object({
  passed: Type.Boolean(),
  action: Type.Union([Type.Literal('none'), Type.Literal('annotate'), Type.Literal('redact'), Type.Literal('block'), Type.Literal('retry')]),
  layers: Type.Object({ integrity: LayerSchema, grounding: LayerSchema, structural: LayerSchema, constraint: LayerSchema }),
  content_sha256: Type.String(),
  retry: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  hold_back_chars: Type.Optional(Type.Integer()),
  redacted_content: Type.Optional(Type.String()),
});

