/**
 * Aho–Corasick automaton over the catalogue keywords: one linear pass over a text tells which
 * keywords occur, hence which patterns may match (the T1 prefilter). Built once per catalogue.
 *
 * The automaton is compiled to a full transition table (failure links resolved at build time)
 * over the alphabet of characters that occur in some keyword; every other character sends the
 * scan back to the root. A step is then two array reads, with no map lookup or failure-link walk.
 */

export interface KeywordAutomaton {
  /** Ids (index in the keyword list) of every keyword that occurs in `text`. */
  find(text: string): Set<number>;
  /**
   * One flag per keyword (by id): 1 where it occurs in `text`; and, for the keywords flagged in
   * `track`, the offsets where each occurrence starts (ascending). With `map`, each character of
   * the text is first mapped through it (by code unit).
   */
  mark(text: string, track?: Uint8Array, map?: Uint16Array): { found: Uint8Array; starts: Map<number, number[]> };
}

export function buildAutomaton(keywords: readonly string[]): KeywordAutomaton {
  // Alphabet: class 0 is "no keyword has this character"; ASCII by table, the rest by map.
  const asciiClass = new Uint8Array(128);
  const otherClass = new Map<number, number>();
  let classes = 1;
  const classOf = (code: number): number => (code < 128 ? asciiClass[code]! : otherClass.get(code) ?? 0);
  for (const keyword of keywords) {
    for (let index = 0; index < keyword.length; index++) {
      const code = keyword.charCodeAt(index);
      if (classOf(code) !== 0) continue;
      if (code < 128) asciiClass[code] = classes++;
      else otherClass.set(code, classes++);
    }
  }
  if (classes > 255) throw new Error('keyword automaton: more than 254 distinct keyword characters');

  // Trie.
  const children: Map<number, number>[] = [new Map()];
  const outputs: number[][] = [[]];
  keywords.forEach((keyword, id) => {
    let state = 0;
    for (let index = 0; index < keyword.length; index++) {
      const symbol = classOf(keyword.charCodeAt(index));
      let target = children[state]!.get(symbol);
      if (target === undefined) {
        target = children.length;
        children.push(new Map());
        outputs.push([]);
        children[state]!.set(symbol, target);
      }
      state = target;
    }
    outputs[state]!.push(id);
  });

  // Breadth-first: failure links, inherited outputs and the resolved transition table.
  const size = children.length;
  const delta = size <= 0xffff ? new Uint16Array(size * classes) : new Uint32Array(size * classes);
  const fail = new Uint32Array(size);
  const queue: number[] = [];
  for (const [symbol, child] of children[0]!) {
    delta[symbol] = child;
    queue.push(child);
  }
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    outputs[state] = [...outputs[state]!, ...outputs[fail[state]!]!];
    const row = state * classes;
    const failRow = fail[state]! * classes;
    // Every symbol goes where the failure state goes, except the state's own edges.
    delta.copyWithin(row, failRow, failRow + classes);
    for (const [symbol, child] of [...children[state]!].sort((left, right) => left[0] - right[0])) {
      delta[row + symbol] = child;
      fail[child] = delta[failRow + symbol]!;
      queue.push(child);
    }
  }
  const emits = outputs.map((list) => (list.length === 0 ? undefined : list));
  const lengths = keywords.map((keyword) => keyword.length);

  return {
    find(text) {
      const found = new Set<number>();
      let state = 0;
      for (let index = 0; index < text.length; index++) {
        const code = text.charCodeAt(index);
        const symbol = code < 128 ? asciiClass[code]! : otherClass.get(code) ?? 0;
        state = symbol === 0 ? 0 : delta[state * classes + symbol]!;
        const emitted = emits[state];
        if (emitted !== undefined) for (const id of emitted) found.add(id);
      }
      return found;
    },
    mark(text, track, map) {
      const found = new Uint8Array(keywords.length);
      const starts = new Map<number, number[]>();
      let state = 0;
      for (let index = 0; index < text.length; index++) {
        const unit = text.charCodeAt(index);
        const code = map === undefined ? unit : map[unit]!;
        const symbol = code < 128 ? asciiClass[code]! : otherClass.get(code) ?? 0;
        state = symbol === 0 ? 0 : delta[state * classes + symbol]!;
        const emitted = emits[state];
        if (emitted === undefined) continue;
        for (const id of emitted) {
          found[id] = 1;
          if (track !== undefined && track[id] === 1) {
            const start = index + 1 - lengths[id]!;
            const list = starts.get(id);
            if (list === undefined) starts.set(id, [start]);
            else list.push(start);
          }
        }
      }
      return { found, starts };
    },
  };
}
