/**
 * Prompt-wrapper unwrapping: payloads hidden inside a benign-looking frame (a JSON document, a
 * code fence, chat-template role tags, a quote, "translate the following text: …"). The frame
 * is recorded as evidence and, when it changes the text structurally (JSON string values,
 * escapes, fences, tags), an unwrapped variant is produced for scanning.
 */

export interface UnwrapResult {
  /** Unwrapped text, or null when no structural wrapper was removed. */
  readonly text: string | null;
  readonly wrappers: readonly string[];
}

const CODE_FENCE = /```[a-z0-9_+-]{0,20}|~~~[a-z0-9_+-]{0,20}/gi;
const ROLE_TAG = /<\|[a-z_]{2,24}\|>|\[\/?inst\]|<<\/?sys>>|<\/?(?:system|user|assistant|instructions?|human|ai)>/gi;
const BLOCKQUOTE = /^[ \t]{0,3}>[ \t]?/gm;
const TASK_FRAME = /\b(?:translate|repeat|summari[sz]e|paraphrase|rewrite|proofread|spell[- ]check|correct|classify|analy[sz]e)\b[^\n:]{0,60}\b(?:following|this|below|text|sentence|passage|input)\b[^\n:]{0,40}:/i;

function collectStrings(value: unknown, out: string[], depth: number): void {
  if (depth > 16 || out.length > 2_000) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, out, depth + 1);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      out.push(key);
      collectStrings(item, out, depth + 1);
    }
  }
}

export function unwrapPrompt(input: string): UnwrapResult {
  const wrappers: string[] = [];
  let text = input;
  let structural = false;

  const trimmed = input.trimStart();
  if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && input.length <= 65_536) {
    try {
      const strings: string[] = [];
      collectStrings(JSON.parse(input), strings, 0);
      if (strings.length > 0) {
        text = strings.join('\n');
        wrappers.push('json');
        structural = true;
      }
    } catch {
      // not JSON: scanned as text
    }
  }
  if (text.includes('```') || text.includes('~~~')) {
    text = text.replace(CODE_FENCE, '\n');
    wrappers.push('code-fence');
    structural = true;
  }
  // Each expression below needs a character the text may not hold (a role tag opens with < or [,
  // a quote line holds >, a task frame ends with a colon): without it, it cannot match.
  const withoutTags = text.includes('<') || text.includes('[') ? text.replace(ROLE_TAG, '\n') : text;
  if (withoutTags !== text) {
    text = withoutTags;
    wrappers.push('role-tag');
    structural = true;
  }
  const withoutQuotes = text.includes('>') ? text.replace(BLOCKQUOTE, '') : text;
  if (withoutQuotes !== text) {
    text = withoutQuotes;
    wrappers.push('blockquote');
    structural = true;
  }
  const bare = text.trim();
  if (bare.length > 2 && `"'\``.includes(bare[0] ?? 'x') && bare[0] === bare[bare.length - 1]) wrappers.push('quoted');
  if (text.includes(':') && TASK_FRAME.test(text)) wrappers.push('task-frame');
  return { text: structural ? text : null, wrappers };
}
