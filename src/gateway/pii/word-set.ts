/**
 * A read-only set of words packed into one string and three typed arrays: the PII name lexicons
 * (about 430,000 short words together) held as `Set<string>` cost one heap string and one hash
 * table entry per word — about 25 MB of the server's live heap, which every major collection
 * walks and V8's heap growth multiplies. Packed, the same words are one flat string (one byte per
 * character when every word is Latin-1) beside an open-addressed table of 32-bit slots, a few MB,
 * and the collector sees five objects instead of 430,000.
 *
 * `has` is an open-addressing probe: the word's FNV-1a hash over its UTF-16 code units picks a
 * slot; a slot whose stored hash and length match is compared code unit by code unit. No string
 * is allocated by a look-up, so it costs what `Set.has` costs on a freshly sliced word (whose hash
 * V8 computes on first use too): bench/word-set.ts prints both side by side.
 */

/** FNV-1a over the UTF-16 code units of `text` from `start` (inclusive) to `end` (exclusive). */
function hashOf(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return hash >>> 0;
}

export class WordSet implements Pick<ReadonlySet<string>, 'has' | 'size'> {
  readonly size: number;
  /** Every word, back to back, in insertion order. */
  private readonly text: string;
  /** Word i is text.slice(starts[i], starts[i + 1]). */
  private readonly starts: Uint32Array;
  /** Open-addressed slots: 0 is empty, i + 1 is word i. A power of two, at least twice `size`. */
  private readonly slots: Uint32Array;
  /** The full hash of the word in each slot, compared before its characters. */
  private readonly hashes: Uint32Array;
  private readonly mask: number;

  /** `words` may repeat a word: it is kept once. */
  constructor(words: Iterable<string>) {
    const unique = words instanceof Set ? (words as Set<string>) : new Set(words);
    const list = [...unique];
    this.size = list.length;
    // join('') makes one flat sequential string, so charCodeAt reads it directly.
    this.text = list.join('');
    this.starts = new Uint32Array(list.length + 1);
    let offset = 0;
    for (let index = 0; index < list.length; index += 1) {
      this.starts[index] = offset;
      offset += list[index]!.length;
    }
    this.starts[list.length] = offset;
    let capacity = 8;
    while (capacity < list.length * 2) capacity *= 2;
    this.slots = new Uint32Array(capacity);
    this.hashes = new Uint32Array(capacity);
    this.mask = capacity - 1;
    for (let index = 0; index < list.length; index += 1) {
      const hash = hashOf(this.text, this.starts[index]!, this.starts[index + 1]!);
      let slot = hash & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = index + 1;
      this.hashes[slot] = hash;
    }
  }

  has(word: string): boolean {
    const hash = hashOf(word, 0, word.length);
    const { slots, hashes, starts, text, mask } = this;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return false;
      if (hashes[slot] !== hash) continue;
      const start = starts[entry - 1]!;
      if (starts[entry]! - start !== word.length) continue;
      let index = 0;
      while (index < word.length && text.charCodeAt(start + index) === word.charCodeAt(index)) index += 1;
      if (index === word.length) return true;
    }
  }

  /** Every word, in the order first given (tests and rebuilding only; a look-up never iterates). */
  *[Symbol.iterator](): IterableIterator<string> {
    for (let index = 0; index < this.size; index += 1) yield this.text.slice(this.starts[index], this.starts[index + 1]);
  }
}
