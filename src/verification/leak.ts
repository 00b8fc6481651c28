/**
 * System-prompt leak check: does the output reproduce the request's system prompt? Word 5-gram
 * overlap: a leak is ≥ 12 consecutive system-prompt words in the output, or ≥ 50 % of the
 * prompt's 5-grams (prompts of fewer than 8 words are not checked). Stand-in for the detection
 * engine's `llm_output` kind; `systemPromptLeak` is the one function to swap when that lands.
 */
import type { Finding } from './types.ts';

const N = 5;

interface Word {
  text: string;
  start: number;
  end: number;
}

function words(text: string): Word[] {
  const list: Word[] = [];
  for (const match of text.matchAll(/[\p{L}\p{N}]+/gu)) list.push({ text: match[0].toLowerCase(), start: match.index, end: match.index + match[0].length });
  return list;
}

export function systemPromptLeak(content: string, systemPrompts: readonly string[]): Finding[] {
  const findings: Finding[] = [];
  if (systemPrompts.length === 0) return findings;
  const output = words(content);
  if (output.length < N) return findings;
  for (const prompt of systemPrompts) {
    const promptWords = words(prompt).map((word) => word.text);
    if (promptWords.length < 8) continue;
    const grams = new Set<string>();
    for (let index = 0; index + N <= promptWords.length; index += 1) grams.add(promptWords.slice(index, index + N).join(' '));
    const covered = new Uint8Array(output.length);
    const seen = new Set<string>();
    for (let index = 0; index + N <= output.length; index += 1) {
      const gram = output.slice(index, index + N).map((word) => word.text).join(' ');
      if (grams.has(gram)) {
        seen.add(gram);
        covered.fill(1, index, index + N);
      }
    }
    let run = 0;
    let longest = 0;
    for (const flag of covered) {
      run = flag ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    if (longest < 12 && seen.size < grams.size * 0.5) continue;
    // One finding per covered run.
    for (let index = 0; index < covered.length; index += 1) {
      if (!covered[index]) continue;
      let last = index;
      while (last + 1 < covered.length && covered[last + 1]) last += 1;
      findings.push({ start: output[index]!.start, end: output[last]!.end, reason: 'system_prompt_leak' });
      index = last;
    }
  }
  return findings;
}
