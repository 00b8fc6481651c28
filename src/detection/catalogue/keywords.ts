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
   * `track`, the offsets where each occurrence starts (ascending), by id. With `map`, each
   * character of the text is first mapped through it (by code unit). With `limit`, a keyword's
   * offsets stop being recorded once there are more than `limit` of them (its list then holds
   * `limit + 1`: callers that give up above `limit` occurrences need no more).
   */
  mark(text: string, track?: Uint8Array, map?: Uint16Array, limit?: number): Marks;
  /**
   * mark(text, track, undefined, limit), with what `mark` needs to answer for another text of the
   * same length (markLike).
   */
  markBase(text: string, track: Uint8Array | undefined, limit: number): MarkBase;
  /**
   * mark(text, base's track and limit), found from the base's pass when `text` has the base
   * text's length and differs from it in few places (a leet variant of the canonical text): only
   * the characters near each difference are read again. Null when that does not pay (or cannot
   * be answered exactly); the caller then marks the text itself.
   */
  markLike(base: MarkBase, text: string): Marks | null;
}

export interface Marks {
  readonly found: Uint8Array;
  readonly starts: ReadonlyMap<number, number[]>;
}

/** A text's marks with the automaton's state after each character and each keyword's count. */
export interface MarkBase extends Marks {
  readonly text: string;
  readonly track: Uint8Array | undefined;
  readonly limit: number;
  readonly states: Uint16Array | Uint32Array;
  readonly counts: Int32Array;
}

export function buildAutomaton(keywords: readonly string[]): KeywordAutomaton {
  // Alphabet: class 0 is "no keyword has this character"; ASCII by table, the rest by map.
  const asciiClass = new Uint8Array(128);
  const otherClass = new Map<number, number>();
  let classes = 1;
  const classOf = (code: number): number => (code < 128 ? asciiClass[code]! : otherClass.get(code) ?? 0);
  // Letters and the space first, so that the columns prose uses most share a row's first cache line.
  const used = new Set(keywords.join(''));
  for (const character of ' abcdefghijklmnopqrstuvwxyz') if (used.has(character)) asciiClass[character.charCodeAt(0)] = classes++;
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

  // States numbered breadth-first, so that the shallow ones, where a scan of prose spends most
  // of its steps, have neighbouring rows in the transition table.
  {
    const order = [0];
    for (let head = 0; head < order.length; head++) for (const [, child] of [...children[order[head]!]!].sort((left, right) => left[0] - right[0])) order.push(child);
    const renumbered = new Int32Array(order.length);
    order.forEach((state, index) => (renumbered[state] = index));
    const oldChildren = [...children];
    const oldOutputs = [...outputs];
    order.forEach((state, index) => {
      children[index] = new Map([...oldChildren[state]!].map(([symbol, child]) => [symbol, renumbered[child]!]));
      outputs[index] = oldOutputs[state]!;
    });
  }

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
  // The same outputs flat: state s emits emitIds[emitFrom[s] .. emitFrom[s + 1]).
  const emitFrom = new Int32Array(size + 1);
  for (let state = 0; state < size; state++) emitFrom[state + 1] = emitFrom[state]! + outputs[state]!.length;
  const emitIds = Int32Array.from(outputs.flat());
  const lengths = Int32Array.from(keywords, (keyword) => keyword.length);
  const longest = Math.max(1, ...lengths);
  // A pass's offset lists by keyword id while it runs (an array read per tracked occurrence
  // instead of a map lookup), and the ids in the order their first offset came; collectStarts
  // turns them into the pass's `starts` map (the same entries, in the same order, as a map
  // filled during the pass) and leaves the scratch empty for the next pass. Passes are
  // synchronous, so one scratch per automaton serves them all.
  const pending = new Array<number[] | undefined>(keywords.length).fill(undefined);
  const pendingIds: number[] = [];
  const collectStarts = (): Map<number, number[]> => {
    const starts = new Map<number, number[]>();
    for (const id of pendingIds) {
      starts.set(id, pending[id]!);
      pending[id] = undefined;
    }
    pendingIds.length = 0;
    return starts;
  };

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
    mark(text, track, map, limit = Infinity) {
      if (pendingIds.length > 0) collectStarts();
      const found = new Uint8Array(keywords.length);
      let state = 0;
      for (let index = 0; index < text.length; index++) {
        const unit = text.charCodeAt(index);
        const code = map === undefined ? unit : map[unit]!;
        const symbol = code < 128 ? asciiClass[code]! : otherClass.get(code) ?? 0;
        state = symbol === 0 ? 0 : delta[state * classes + symbol]!;
        const end = emitFrom[state + 1]!;
        for (let at = emitFrom[state]!; at < end; at++) {
          const id = emitIds[at]!;
          found[id] = 1;
          if (track !== undefined && track[id] === 1) {
            const list = pending[id];
            if (list === undefined) {
              pending[id] = [index + 1 - lengths[id]!];
              pendingIds.push(id);
            } else if (list.length <= limit) list.push(index + 1 - lengths[id]!);
          }
        }
      }
      return { found, starts: collectStarts() };
    },
    markBase(text, track, limit) {
      if (pendingIds.length > 0) collectStarts();
      const states = size <= 0xffff ? new Uint16Array(text.length) : new Uint32Array(text.length);
      const counts = new Int32Array(keywords.length);
      const found = new Uint8Array(keywords.length);
      let state = 0;
      for (let index = 0; index < text.length; index++) {
        const code = text.charCodeAt(index);
        const symbol = code < 128 ? asciiClass[code]! : otherClass.get(code) ?? 0;
        state = symbol === 0 ? 0 : delta[state * classes + symbol]!;
        states[index] = state;
        const end = emitFrom[state + 1]!;
        for (let at = emitFrom[state]!; at < end; at++) {
          const id = emitIds[at]!;
          counts[id]!++;
          found[id] = 1;
          if (track !== undefined && track[id] === 1) {
            const list = pending[id];
            if (list === undefined) {
              pending[id] = [index + 1 - lengths[id]!];
              pendingIds.push(id);
            } else if (list.length <= limit) list.push(index + 1 - lengths[id]!);
          }
        }
      }
      return { text, track, limit, states, counts, found, starts: collectStarts() };
    },
    markLike(base, text) {
      const length = text.length;
      if (base.text.length !== length) return null;
      // The state after character i depends on characters (i - longest, i] only: a difference
      // at d changes the states (and what is emitted) at d .. d + longest - 1. Those stretches,
      // merged, are read again in both texts.
      const stretches: number[] = [];
      let reread = 0;
      for (let index = 0; index < length; index++) {
        if (text.charCodeAt(index) === base.text.charCodeAt(index)) continue;
        const last = stretches.length - 1;
        const until = Math.min(length, index + longest);
        if (last > 0 && index <= stretches[last]!) {
          reread += until - stretches[last]!;
          stretches[last] = until;
        } else {
          stretches.push(index, until);
          reread += until - index;
        }
        if (reread > length / 4) return null;
      }
      const track = base.track;
      const limit = base.limit;
      const counts = base.counts.slice();
      // Tracked keywords whose offsets change: the base's offsets that end in a stretch go, the
      // text's own there come.
      const removed = new Map<number, Set<number>>();
      const added = new Map<number, number[]>();
      const touched = new Set<number>();
      for (let pair = 0; pair < stretches.length; pair += 2) {
        const from = stretches[pair]!;
        const to = stretches[pair + 1]!;
        let state = from === 0 ? 0 : base.states[from - 1]!;
        for (let index = from; index < to; index++) {
          const previous = base.states[index]!;
          const previousEnd = emitFrom[previous + 1]!;
          for (let at = emitFrom[previous]!; at < previousEnd; at++) {
            const id = emitIds[at]!;
            counts[id]!--;
            touched.add(id);
            if (track !== undefined && track[id] === 1) {
              let set = removed.get(id);
              if (set === undefined) removed.set(id, (set = new Set()));
              set.add(index + 1 - lengths[id]!);
            }
          }
          const code = text.charCodeAt(index);
          const symbol = code < 128 ? asciiClass[code]! : otherClass.get(code) ?? 0;
          state = symbol === 0 ? 0 : delta[state * classes + symbol]!;
          const end = emitFrom[state + 1]!;
          for (let at = emitFrom[state]!; at < end; at++) {
            const id = emitIds[at]!;
            counts[id]!++;
            touched.add(id);
            if (track !== undefined && track[id] === 1) {
              const list = added.get(id);
              if (list === undefined) added.set(id, [index + 1 - lengths[id]!]);
              else list.push(index + 1 - lengths[id]!);
            }
          }
        }
      }
      const found = base.found.slice();
      for (const id of touched) found[id] = counts[id]! > 0 ? 1 : 0;
      if (removed.size === 0 && added.size === 0) return { found, starts: base.starts };
      const starts = new Map(base.starts);
      for (const id of new Set([...removed.keys(), ...added.keys()])) {
        const previous = base.starts.get(id) ?? [];
        if (previous.length > limit) {
          // The base's list stopped at limit + 1 offsets: its content is not known beyond them.
          if (counts[id]! > limit) continue;
          return null;
        }
        const gone = removed.get(id);
        const list = [...(gone === undefined ? previous : previous.filter((start) => !gone.has(start))), ...(added.get(id) ?? [])].sort((left, right) => left - right);
        if (list.length > limit + 1) list.length = Math.floor(limit) + 1;
        if (list.length === 0) starts.delete(id);
        else starts.set(id, list);
      }
      return { found, starts };
    },
  };
}
