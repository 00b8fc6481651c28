/** Shannon entropy helpers (bits per character) used as an obfuscation signal. */

export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let entropy = 0;
  const total = text.length;
  for (const count of counts.values()) {
    const probability = count / total;
    entropy -= probability * Math.log2(probability);
  }
  return entropy;
}

export interface EntropyProfile {
  /** Entropy of the whole (bounded) text. */
  readonly overall: number;
  /** Highest entropy among long whitespace-free tokens (>= 24 chars), 0 when none. */
  readonly maxToken: number;
  /** Long tokens (>= 24 chars) with entropy above 4.5 bits/char: encoded blobs, keys, gibberish. */
  readonly highEntropyTokens: number;
}

const LONG_TOKEN = /\S{24,}/g;

export function entropyProfile(text: string): EntropyProfile {
  const sample = text.length > 8192 ? text.slice(0, 8192) : text;
  let maxToken = 0;
  let highEntropyTokens = 0;
  for (const match of sample.matchAll(LONG_TOKEN)) {
    const value = shannonEntropy(match[0].slice(0, 512));
    if (value > maxToken) maxToken = value;
    if (value > 4.5) highEntropyTokens++;
  }
  return { overall: shannonEntropy(sample), maxToken, highEntropyTokens };
}
