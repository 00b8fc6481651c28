/**
 * `npx tsx bench/command-docs.ts [--dir DIR] [--spans]`: benign command documentation inspected as
 * `tool_output` (issue #32 items 3–4): manual pages, `--help` output and READMEs of this
 * machine's own programs and packages, the kind of text an agent's shell or file tool returns.
 * None of it is an instruction to the assistant, so every refusal (challenge or block) is a false
 * positive and every alert a ranking cost. Prints, per source (a sub-folder of DIR: man1, man5,
 * man7, man8, help, readme-doc, readme-npm …), how many texts were refused and how many reached
 * alert or above, and which finding ids put them there (with the matched text under --spans).
 *
 * The texts are built on the machine, not kept in the repository (first 8,000 characters each):
 *   man pages:  MANWIDTH=80 man -l -P cat /usr/share/man/manN/PAGE.gz | col -bx > DIR/manN/PAGE.txt
 *   --help:     timeout 2 runuser -u nobody -- COMMAND --help </dev/null > DIR/help/COMMAND.txt
 *   READMEs:    /usr/share/doc/X/README* (zcat when .gz) > DIR/readme-doc/…, node_modules/X/README.md > DIR/readme-npm/…
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createDetection, type ThreatDecision } from '../src/detection/index.ts';

interface SourceCount { texts: number; refused: number; alert: number; refusedBy: Record<string, number>; alertBy: Record<string, number> }

export async function runCommandDocsBench(directory: string, spans = false): Promise<object> {
  if (!existsSync(directory)) return { bench: 'command-docs', skipped: true, reason: `${directory} not found` };
  const engine = createDetection({ semantic: false, analysisCache: false });
  const bySource: Record<string, SourceCount> = {};
  const examples: Array<{ source: string; file: string; decision: string; score: number; findings: Array<{ id: string; confidence: number; text?: string }> }> = [];
  for (const source of readdirSync(directory).sort()) {
    const folder = path.join(directory, source);
    const counter: SourceCount = (bySource[source] = { texts: 0, refused: 0, alert: 0, refusedBy: {}, alertBy: {} });
    for (const file of readdirSync(folder).sort()) {
      const text = readFileSync(path.join(folder, file), 'utf8');
      if (text.trim().length === 0) continue;
      const decision: ThreatDecision = await engine.inspect({ kind: 'tool_output', content: text });
      counter.texts++;
      const refused = !decision.allowed;
      const alerted = decision.decision !== 'allow' && decision.decision !== 'log';
      if (refused) counter.refused++;
      if (alerted) counter.alert++;
      if (!alerted) continue;
      const ids = [...new Set(decision.patterns_matched.map((pattern) => pattern.id))];
      for (const id of ids) {
        const table = refused ? counter.refusedBy : counter.alertBy;
        table[id] = (table[id] ?? 0) + 1;
      }
      if (spans) {
        examples.push({
          source, file, decision: decision.decision, score: decision.threat_score,
          findings: decision.patterns_matched.map((pattern) => ({ id: pattern.id, confidence: pattern.confidence, ...(pattern.span === undefined ? {} : { text: text.slice(Math.max(0, pattern.span.start - 60), pattern.span.end + 60).replace(/\s+/g, ' ') }) })),
        });
      }
    }
  }
  const total = Object.values(bySource).reduce((sum, c) => ({ texts: sum.texts + c.texts, refused: sum.refused + c.refused, alert: sum.alert + c.alert }), { texts: 0, refused: 0, alert: 0 });
  return { bench: 'command-docs', directory, total, by_source: bySource, ...(spans ? { examples } : {}) };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const args = process.argv.slice(2);
  const dirIndex = args.indexOf('--dir');
  const directory = dirIndex >= 0 && args[dirIndex + 1] !== undefined ? args[dirIndex + 1]! : '/tmp/cmddocs-corpus';
  console.log(JSON.stringify(await runCommandDocsBench(directory, args.includes('--spans')), null, 1));
}
