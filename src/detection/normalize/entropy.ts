/** Shannon entropy helpers (bits per character) used as an obfuscation signal. */

export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const ascii = new Uint32Array(128);
  let other: Map<number, number> | null = null;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 128) ascii[code]!++;
    else {
      other ??= new Map();
      other.set(code, (other.get(code) ?? 0) + 1);
    }
  }
  let entropy = 0;
  const total = text.length;
  const add = (count: number) => {
    if (count === 0) return;
    const probability = count / total;
    entropy -= probability * Math.log2(probability);
  };
  for (const count of ascii) add(count);
  if (other !== null) for (const count of other.values()) add(count);
  return entropy;
}

function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 0xa0;
}

export interface EntropyProfile {
  /** Highest entropy among long whitespace-free tokens (>= 24 chars), 0 when none. */
  readonly maxToken: number;
  /** Long tokens (>= 24 chars) with entropy above 4.5 bits/char: encoded blobs, keys, gibberish. */
  readonly highEntropyTokens: number;
}

export function entropyProfile(text: string): EntropyProfile {
  const sample = text.length > 8192 ? text.slice(0, 8192) : text;
  let maxToken = 0;
  let highEntropyTokens = 0;
  let index = 0;
  while (index < sample.length) {
    while (index < sample.length && isSpace(sample.charCodeAt(index))) index++;
    const start = index;
    while (index < sample.length && !isSpace(sample.charCodeAt(index))) index++;
    if (index - start < 24) continue;
    const value = shannonEntropy(sample.slice(start, Math.min(index, start + 512)));
    if (value > maxToken) maxToken = value;
    if (value > 4.5) highEntropyTokens++;
  }
  return { maxToken, highEntropyTokens };
}
