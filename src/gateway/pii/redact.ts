/**
 * Redaction of chat messages before they leave for an upstream provider, and restoration of the
 * placeholders in what comes back.
 *
 * Posture: the mapping from placeholder to original value lives only in the memory of the one
 * request that made it (never logged, never cached, never sent upstream). A value seen twice in
 * one request gets the same placeholder, so the model can still refer to "[EMAIL_1]"
 * consistently. Restoration is opt-in per org because it puts the original values back into
 * model output, which a downstream consumer might not expect.
 *
 * The spans found in a message's text are remembered per replica (`messageSpans`): a chat resends
 * its whole history, and a system prompt comes with every call, so most messages were scanned
 * before. Only the text → spans of texts up to SPAN_CACHE.MAX_TEXT characters is kept (the text
 * is the key; detection's analysis cache already holds the same texts), bounded and expiring like
 * that cache; no mapping, placeholder or request is cached.
 */
import { LRUCache } from 'lru-cache';
import { detectPii, type PiiSpan, type PiiType } from './detect.ts';

/** Bounds of the spans remembered per message text (as detection's analysis cache: analysis-cache.ts). */
export const SPAN_CACHE = { MAX_ENTRIES: 2_000, MAX_TEXT: 8_192, MAX_TOTAL_CHARS: 8_000_000, TTL_MS: 10 * 60_000 } as const;
const NO_SPANS: readonly PiiSpan[] = Object.freeze([]);
const spansByText = new LRUCache<string, readonly PiiSpan[]>({
  max: SPAN_CACHE.MAX_ENTRIES,
  maxSize: SPAN_CACHE.MAX_TOTAL_CHARS,
  // The key and the values of its spans.
  sizeCalculation: (spans, text) => text.length + spans.reduce((sum, span) => sum + span.value.length, 0) + 1,
  ttl: SPAN_CACHE.TTL_MS,
  ttlAutopurge: false,
});

/** detectPii of a message's text (every type), remembered for repeated texts; the spans must not be changed. */
export function messageSpans(text: string): readonly PiiSpan[] {
  if (text.length > SPAN_CACHE.MAX_TEXT) return detectPii(text);
  const known = spansByText.get(text);
  if (known !== undefined) return known;
  const found = detectPii(text);
  const spans = found.length === 0 ? NO_SPANS : Object.freeze(found.map((span) => Object.freeze(span)));
  spansByText.set(text, spans);
  return spans;
}

export type PiiMode = 'off' | 'redact' | 'block';

export interface RedactionSummary {
  mode: PiiMode;
  /** Count of redacted values per type (only types that occurred). */
  redacted: Partial<Record<PiiType, number>>;
  total: number;
}

export interface RedactionResult<Message> {
  messages: Message[];
  /** placeholder → original value. */
  mapping: Map<string, string>;
  summary: RedactionSummary;
}

interface ChatMessage {
  role: string;
  content: string;
}

/** Replaces PII in each message's content by typed placeholders such as [EMAIL_1]. */
export function redactMessages<Message extends ChatMessage>(messages: readonly Message[], mode: PiiMode = 'redact'): RedactionResult<Message> {
  const mapping = new Map<string, string>();
  const byValue = new Map<string, string>();
  const counters = new Map<PiiType, number>();
  const redacted: Partial<Record<PiiType, number>> = {};
  let total = 0;
  const output = messages.map((message) => {
    const spans = messageSpans(message.content);
    if (spans.length === 0) return message;
    let text = '';
    let cursor = 0;
    for (const span of spans) {
      const key = `${span.type}\u0000${span.value}`;
      let placeholder = byValue.get(key);
      if (placeholder === undefined) {
        const next = (counters.get(span.type) ?? 0) + 1;
        counters.set(span.type, next);
        placeholder = `[${span.type}_${next}]`;
        byValue.set(key, placeholder);
        mapping.set(placeholder, span.value);
      }
      redacted[span.type] = (redacted[span.type] ?? 0) + 1;
      total += 1;
      text += message.content.slice(cursor, span.start) + placeholder;
      cursor = span.end;
    }
    text += message.content.slice(cursor);
    return { ...message, content: text };
  });
  return { messages: output, mapping, summary: { mode, redacted, total } };
}

const PLACEHOLDER = /\[(?:EMAIL|PHONE|CARD|IBAN|SSN|IP|SECRET|PERSON)_\d{1,6}\]/g;
/** Longest placeholder text: "[SECRET_999999]". */
const MAX_PLACEHOLDER_LENGTH = 15;

/** Puts original values back for every known placeholder in `text`. */
export function restorePlaceholders(text: string, mapping: ReadonlyMap<string, string>): string {
  if (mapping.size === 0 || !text.includes('[')) return text;
  return text.replace(PLACEHOLDER, (placeholder) => mapping.get(placeholder) ?? placeholder);
}

/**
 * Restores placeholders across stream chunks: a placeholder may arrive split ("[EMA" + "IL_1]"),
 * so text from an unclosed "[" that could still become a placeholder is held back until it is
 * complete or clearly not one. `flush()` releases whatever is held at the end of the stream.
 */
export function createStreamRestorer(mapping: ReadonlyMap<string, string>): { push(delta: string): string; flush(): string } {
  let held = '';
  return {
    push(delta: string): string {
      if (mapping.size === 0) return delta;
      const text = held + delta;
      held = '';
      const open = text.lastIndexOf('[');
      if (open !== -1 && text.indexOf(']', open) === -1 && text.length - open < MAX_PLACEHOLDER_LENGTH && /^\[[A-Z]{0,6}(?:_\d{0,6})?$/.test(text.slice(open))) {
        held = text.slice(open);
        return restorePlaceholders(text.slice(0, open), mapping);
      }
      return restorePlaceholders(text, mapping);
    },
    flush(): string {
      const rest = held;
      held = '';
      return restorePlaceholders(rest, mapping);
    },
  };
}
