/**
 * Verification while streaming, with a bounded hold-back window.
 *
 * The guard keeps the last `hold_back_chars` characters of the stream unreleased. Before text
 * leaves the window, the checks that can judge a slice of text run over the window plus the
 * preceding `hold_back_chars` (so a match straddling the boundary is seen): invisible/bidi
 * characters, banned phrases, must-not-match patterns, URL hosts, secrets/PII and system-prompt
 * runs. Anything up to `hold_back_chars` long is therefore caught before any character of it is
 * released. When the request has sources and grounding acts (redact/block/retry), text is
 * released only up to the end of the last complete sentence, after that sentence's claims were
 * scored. On a finding, the layer's action decides: annotate → released as is; redact → the span
 * is replaced before release; block → the stream ends with an error event carrying the verdict;
 * retry (impossible once bytes left) → the policy's `stream.on_failure` (redact or end).
 * Whole-output checks (JSON, schema, fences, required phrases, length, completeness) run at the
 * end; the final event carries the full `verification` object.
 *
 * Latency cost: the first `hold_back_chars` characters (default 128, about 30 tokens) are
 * delayed until more text arrives or the stream ends; with sentence-gated grounding, up to one
 * sentence (capped at 4 096 characters, after which text is released and judged at the end).
 *
 * Batched checks: the window checks read about twice the hold-back per run, so running them on
 * every delta (often 3–6 characters) read each character ~40 times. They run when the text grew
 * by half the hold-back since the last run, or CHECK_EVERY_MS passed (a slow stream is checked on
 * every delta, so batching adds no wait there), and always at the end. Text is released only up
 * to what the last run checked, so nothing leaves unchecked: between runs up to half the
 * hold-back more is held (at most `hold_back_chars` × 1.5 unreleased on a fast stream).
 */
import { assessClaims, calibratedResponseScore, indexSources, taskOf, type SourceIndex } from './grounding.ts';
import { textFindings } from './integrity.ts';
import { constraintLayer } from './constraint.ts';
import type { ResolvedPolicy } from './policy.ts';
import { REDACTION, decide, runVerification, type GroundingTiers } from './verify.ts';
import type { Action, Finding, LayerName, Verification, VerifyInput } from './types.ts';

const MAX_SENTENCE_HOLD = 4_096;
/** A run of the checks is due after this long even if the text grew by less than the step (ms). */
const CHECK_EVERY_MS = 50;
/** Characters a sentence end spans at most (`.` + closing quote + white space): the search resumes this far back. */
const SENTENCE_END_SPAN = 3;

export interface StreamStop {
  layer: LayerName;
  findings: Finding[];
  verification: Verification;
}

export interface StreamGuard {
  readonly holdBackChars: number;
  /** Feeds text; returns what may be released now, or the stop that ends the stream. */
  push(text: string): { release: string; stop: StreamStop | null };
  /** The stream ended (or was cut): releases the rest (or stops) and gives the final verification. */
  end(outcome: { finishReason: string; cut?: boolean; toolCalls?: VerifyInput['toolCalls'] }): Promise<{ release: string; stop: StreamStop | null; verification: Verification }>;
}

type StreamAction = 'annotate' | 'redact' | 'end';

export function createStreamGuard(base: Omit<VerifyInput, 'content' | 'finishReason'>, policy: ResolvedPolicy, tiers: GroundingTiers = {}): StreamGuard {
  const holdBack = policy.stream.hold_back_chars;
  /** Characters of growth that make a run of the checks due (1 with no hold-back: every delta). */
  const checkStep = Math.max(1, holdBack >> 1);
  /** `full.length` and the time at the last run of the checks. */
  let checkedLength = 0;
  let checkedAt = performance.now();
  const actionOf = (layer: LayerName): StreamAction => streamAction(policy.actions[layer], policy.stream.on_failure);
  const hasSources = base.sources !== undefined && base.sources.length > 0;
  const gateSentences = hasSources && actionOf('grounding') !== 'annotate';
  let index: SourceIndex | null = null;
  const full = new StreamText();
  /** Characters of `full` already released. */
  let released = 0;
  /** Characters of `full` already checked by the window checks / grounding. */
  let groundedUpTo = 0;
  /** How far `full` was searched for a sentence end (none in [groundedUpTo, searchedTo − SENTENCE_END_SPAN)). */
  let searchedTo = 0;
  /** End of the last span replaced on release (absolute offset). */
  let redactedTo = -1;
  /** Spans to replace in not-yet-released text (absolute offsets). */
  const redactions: Finding[] = [];
  /** Findings noted while streaming (annotate or redact), merged into the final verification. */
  const noted: Partial<Record<LayerName, Finding[]>> = {};

  const note = (layer: LayerName, findings: Finding[]) => (noted[layer] ??= []).push(...findings);

  const stopWith = (layer: LayerName, findings: Finding[]): StreamStop => {
    note(layer, findings);
    const layers = {} as Verification['layers'];
    for (const name of ['integrity', 'grounding', 'structural', 'constraint'] as const) {
      const findingsOf = noted[name] ?? [];
      layers[name] = { verdict: findingsOf.length > 0 ? 'fail' : 'skipped', score: findingsOf.length > 0 ? 1 : 0, findings: findingsOf, ms: 0, fails: name === 'grounding' ? 'open' : 'closed', info: { stage: 'stream' } };
    }
    const verification = { ...decide(layers, policy, full.whole().slice(0, released)), hold_back_chars: holdBack };
    verification.action = 'block';
    return { layer, findings, verification };
  };

  /** Runs the window checks over [from, to) of `full`; returns a stop or null. */
  const checkWindow = (to: number): StreamStop | null => {
    const from = Math.max(0, released - holdBack);
    const window = full.slice(from, to);
    const integrity = policy.integrity.flag_invisible ? textFindings(window, from) : [];
    const constraint = constraintLayer({ content: window, finishReason: null, ...(base.systemPrompts ? { systemPrompts: base.systemPrompts } : {}) }, policy, { window: true, offset: from }).findings;
    for (const [layer, findings] of [['integrity', integrity], ['constraint', constraint]] as const) {
      // Only findings that reach into unreleased text are new.
      const fresh = findings.filter((finding) => finding.end > released && !seen(layer, finding));
      if (fresh.length === 0) continue;
      const action = actionOf(layer);
      if (action === 'end') return stopWith(layer, fresh);
      note(layer, fresh);
      if (action === 'redact') redactions.push(...fresh);
    }
    return null;
  };

  const seen = (layer: LayerName, finding: Finding) => (noted[layer] ?? []).some((other) => other.start === finding.start && other.end === finding.end && other.reason === finding.reason);

  /** Scores the claims of [groundedUpTo, end) and moves the mark; a stop when grounding ends the stream. */
  const groundSegment = (end: number): StreamStop | null => {
    index ??= indexSources(base.sources!, base.question ?? null);
    const offset = groundedUpTo;
    // Each sentence is judged as a one-claim answer with the task's calibration (as the final verdict is).
    const task = taskOf(index, base.question);
    const claims = assessClaims(full.slice(offset, end), index).filter((claim) => calibratedResponseScore(task, [claim], claim.unsupportedShare) >= policy.grounding.threshold);
    groundedUpTo = end;
    if (claims.length === 0) return null;
    const findings = claims.map((claim) => ({ start: offset + claim.start, end: offset + claim.end, reason: claim.findings[0]?.reason ?? 'claim_not_supported' }));
    if (actionOf('grounding') === 'end') return stopWith('grounding', findings);
    note('grounding', findings);
    redactions.push(...findings);
    return null;
  };

  /** Sentence gate: how far text may be released (end of the last complete, scored sentence before `to`). */
  const groundTo = (to: number): { end: number; stop: StreamStop | null } => {
    if (to <= groundedUpTo) return { end: to, stop: null };
    // Only the text not yet searched (and the few characters a sentence end spans) is searched again.
    const from = Math.max(groundedUpTo, searchedTo - SENTENCE_END_SPAN);
    const boundary = lastSentenceEnd(full.slice(from, to));
    if (boundary < 0) {
      searchedTo = to;
      if (to - groundedUpTo < MAX_SENTENCE_HOLD) return { end: groundedUpTo, stop: null };
      // An over-long sentence: released now, judged at the end.
      return { end: to, stop: null };
    }
    const end = from + boundary;
    searchedTo = end;
    return { end, stop: groundSegment(end) };
  };

  /** Releases `full` up to `to`, applying redactions that fall inside. */
  const releaseTo = (to: number): string => {
    if (to <= released) return '';
    let output = '';
    let cursor = released;
    const spans = redactions.filter((span) => span.end > cursor && span.start < to).sort((a, b) => a.start - b.start);
    for (const span of spans) {
      if (span.end > to) {
        // A span crossing the release point: release up to its start only.
        to = Math.max(cursor, span.start);
        break;
      }
      if (span.start > cursor) output += full.slice(cursor, span.start);
      // A span overlapping the one just replaced (a secret found again, longer, as more of it
      // arrived) widens that replacement instead of adding a second marker.
      if (span.start >= cursor || cursor > redactedTo) output += REMOVED.has(span.reason) ? '' : REDACTION;
      cursor = Math.max(cursor, span.end);
      redactedTo = cursor;
    }
    if (to > cursor) output += full.slice(cursor, to);
    released = Math.max(released, to);
    return output;
  };

  return {
    holdBackChars: holdBack,
    push(text) {
      full.append(text);
      let target = full.length - holdBack;
      if (target <= released) return { release: '', stop: null };
      // Batched: not yet due (see the module comment); nothing past the last run is released meanwhile.
      if (full.length - checkedLength < checkStep) {
        const now = performance.now();
        if (now - checkedAt < CHECK_EVERY_MS) return { release: '', stop: null };
        checkedAt = now;
      } else checkedAt = performance.now();
      checkedLength = full.length;
      const stop = checkWindow(full.length);
      if (stop !== null) return { release: '', stop };
      if (gateSentences) {
        const grounded = groundTo(target);
        if (grounded.stop !== null) return { release: '', stop: grounded.stop };
        target = Math.min(target, grounded.end);
      }
      const release = releaseTo(target);
      // Nothing before the window (and, when sentences are gated, the unsearched part of the open
      // sentence) is read while streaming; an over-long sentence's start is read once more when it ends.
      full.settle(Math.max(0, gateSentences ? Math.min(released - holdBack, Math.max(groundedUpTo, searchedTo - SENTENCE_END_SPAN)) : released - holdBack));
      return { release, stop: null };
    },
    async end(outcome) {
      const stop = checkWindow(full.length);
      if (stop !== null) return { release: '', stop, verification: stop.verification };
      if (gateSentences && full.length > groundedUpTo) {
        const grounded = groundSegment(full.length);
        if (grounded !== null) return { release: '', stop: grounded, verification: grounded.verification };
      }
      const input: VerifyInput = { ...base, content: full.whole(), finishReason: outcome.finishReason };
      if (outcome.cut === true) input.cut = true;
      if (outcome.toolCalls !== undefined) input.toolCalls = outcome.toolCalls;
      // runVerification's object is this stream's own (decide builds it fresh): the window is added to it, not to a copy.
      const verification: Verification = await runVerification(input, policy, tiers);
      verification.hold_back_chars = holdBack;
      // Merge what was noted while streaming (e.g. a redacted span the final text still shows).
      for (const [layer, findings] of Object.entries(noted) as Array<[LayerName, Finding[]]>) {
        const result = verification.layers[layer];
        for (const finding of findings) if (!result.findings.some((other) => other.start === finding.start && other.end === finding.end)) result.findings.push(finding);
        if (findings.length > 0 && result.verdict !== 'fail') {
          result.verdict = 'fail';
          result.score = Math.max(result.score, 1);
        }
      }
      // Only `passed` and `action` are read from it: the content's hash, already in `verification`, is not computed again.
      const final = decide(verification.layers, policy, full.whole(), verification.content_sha256);
      verification.passed = final.passed;
      verification.action = final.action;
      // A whole-output failure whose action ends the stream (e.g. invalid JSON with block).
      for (const layer of ['integrity', 'structural', 'constraint', 'grounding'] as const) {
        const result = verification.layers[layer];
        const fresh = result.findings.filter((finding) => !(noted[layer] ?? []).includes(finding));
        if ((result.verdict === 'fail' || (result.verdict === 'error' && result.fails === 'closed')) && fresh.length > 0 && actionOf(layer) === 'end') {
          verification.action = 'block';
          return { release: '', stop: { layer, findings: fresh, verification }, verification };
        }
        if (actionOf(layer) === 'redact') redactions.push(...fresh.filter((finding) => finding.end > released));
      }
      const release = releaseTo(full.length);
      return { release, stop: null, verification };
    },
  };
}

/** Characters gathered before the tail's settled part is moved out of it. */
const SETTLE_AT = 4_096;

/**
 * The streamed text. Reads while streaming fall near its end (the window, the grounding mark, the
 * release point), so it keeps a flat tail from the earliest of them and the chunks before it. A
 * plain string grown with `+=` and sliced on every push is flattened whole each time, which made
 * a long stream quadratic (a 250 KB answer in 16-character deltas took 11 s of CPU).
 */
class StreamText {
  /** Settled chunks, oldest first, with the offset each starts at. */
  private readonly head: string[] = [];
  private readonly headStarts: number[] = [];
  private tail = '';
  private tailStart = 0;
  length = 0;

  append(text: string): void {
    this.tail += text;
    this.length += text.length;
  }

  slice(from: number, to: number): string {
    if (from < this.tailStart) this.reopen(from);
    return this.tail.slice(from - this.tailStart, to - this.tailStart);
  }

  /** The whole text (joined once; the end of a stream and a stop read it). */
  whole(): string {
    this.reopen(0);
    return this.tail;
  }

  /** Moves the settled chunks from the one holding `from` back into the tail (only those: an over-long sentence's start). */
  private reopen(from: number): void {
    let first = this.head.length;
    while (first > 0 && this.headStarts[first - 1]! + this.head[first - 1]!.length > from) first -= 1;
    if (first === this.head.length) return;
    this.tail = this.head.slice(first).join('') + this.tail;
    this.tailStart = this.headStarts[first]!;
    this.head.length = first;
    this.headStarts.length = first;
  }

  /** Nothing before `from` will be read while streaming: move it out of the tail once enough has gathered. */
  settle(from: number): void {
    const cut = from - this.tailStart;
    if (cut < SETTLE_AT) return;
    this.head.push(this.tail.slice(0, cut));
    this.headStarts.push(this.tailStart);
    this.tail = this.tail.slice(cut);
    this.tailStart = from;
  }
}

const REMOVED = new Set(['invisible_characters', 'bidi_control', 'unicode_tag_characters', 'control_character', 'replacement_character', 'invalid_encoding']);

function streamAction(action: Action, onFailure: 'redact' | 'end'): StreamAction {
  if (action === 'block') return 'end';
  if (action === 'retry') return onFailure;
  return action;
}

/** Index just after the last sentence end (punctuation + whitespace, or a line break) in text, or -1. */
function lastSentenceEnd(text: string): number {
  let last = -1;
  for (const match of text.matchAll(/[.!?]["')\]]?\s|\n/g)) last = match.index + match[0].length;
  return last;
}
