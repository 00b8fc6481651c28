/**
 * The seam through which the verification capability checks completions (issue #18). The
 * gateway defines the shape and calls it at one place for JSON answers and one for streams
 * (routes.ts); verification implements it and provides it with `provideCompletionVerifier`.
 * Without a provided verifier every completion answers `verification: null`, as before.
 */
import type { CompletionBody } from './schemas.ts';
import type { CompletionEnvelope } from './settlement.ts';

export interface VerifierContext {
  orgId: string;
  requestId: string;
  body: CompletionBody;
}

/** An error event or coded error the verifier wants the client to get instead of content. */
export interface VerifierStop {
  code: 'VERIFICATION_BLOCKED';
  verification: Record<string, unknown>;
}

export interface StreamVerifier {
  push(text: string): { release: string; stop: VerifierStop | null };
  end(outcome: { finishReason: string; provider: string; model: string; cut?: boolean; toolCalls?: Array<{ id: string; name: string; arguments: string }> }): Promise<{
    release: string;
    stop: VerifierStop | null;
    verification: Record<string, unknown> | null;
  }>;
}

export interface CompletionVerifier {
  /**
   * Verifies a JSON answer: returns the envelope to send (verification attached, content maybe
   * redacted or from a retry), or throws SvcError VERIFICATION_BLOCKED. `retry` answers the same
   * request with the next provider of the org's route; null when there is none.
   * `run` applies the response filter to the retried answer; its THREAT_BLOCKED is rethrown as is.
   */
  completion(context: VerifierContext, envelope: CompletionEnvelope, retry: { provider: string; run: () => Promise<CompletionEnvelope> } | null): Promise<CompletionEnvelope>;
  /** A guard for a stream of this request; null when verification is off for the org. */
  stream(context: VerifierContext): Promise<StreamVerifier | null>;
}

export { VerificationSchema } from './verification-schema.ts';
