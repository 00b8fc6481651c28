/**
 * Aho–Corasick automaton over the catalogue keywords: one linear pass over a text tells which
 * keywords occur, hence which patterns may match (the T1 prefilter). Built once per catalogue.
 */

interface Node {
  readonly next: Map<number, number>;
  fail: number;
  /** Keyword ids ending here (including those inherited through failure links). */
  outputs: number[];
}

export interface KeywordAutomaton {
  /** Ids (index in the keyword list) of every keyword that occurs in `text`. */
  find(text: string): Set<number>;
}

export function buildAutomaton(keywords: readonly string[]): KeywordAutomaton {
  const nodes: Node[] = [{ next: new Map(), fail: 0, outputs: [] }];
  keywords.forEach((keyword, id) => {
    let state = 0;
    for (let index = 0; index < keyword.length; index++) {
      const code = keyword.charCodeAt(index);
      let target = nodes[state]!.next.get(code);
      if (target === undefined) {
        target = nodes.length;
        nodes.push({ next: new Map(), fail: 0, outputs: [] });
        nodes[state]!.next.set(code, target);
      }
      state = target;
    }
    nodes[state]!.outputs.push(id);
  });
  // Breadth-first failure links.
  const queue: number[] = [];
  for (const child of nodes[0]!.next.values()) queue.push(child);
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    for (const [code, child] of nodes[state]!.next) {
      let fail = nodes[state]!.fail;
      while (fail !== 0 && !nodes[fail]!.next.has(code)) fail = nodes[fail]!.fail;
      const candidate = nodes[fail]!.next.get(code);
      nodes[child]!.fail = candidate !== undefined && candidate !== child ? candidate : 0;
      nodes[child]!.outputs = [...nodes[child]!.outputs, ...nodes[nodes[child]!.fail]!.outputs];
      queue.push(child);
    }
  }
  return {
    find(text) {
      const found = new Set<number>();
      let state = 0;
      for (let index = 0; index < text.length; index++) {
        const code = text.charCodeAt(index);
        let next = nodes[state]!.next.get(code);
        while (next === undefined && state !== 0) {
          state = nodes[state]!.fail;
          next = nodes[state]!.next.get(code);
        }
        state = next ?? 0;
        for (const id of nodes[state]!.outputs) found.add(id);
      }
      return found;
    },
  };
}
