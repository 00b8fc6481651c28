/**
 * The pattern catalogue (data) and its compiled form. Compilation validates the catalogue once
 * at load: unique ids, weights in 0..1, keywords present and lower case; an invalid entry stops
 * startup rather than silently weakening detection.
 */
import type { InspectKind } from '../types.ts';
import { AGENT_PATTERNS } from './agent.ts';
import { API_PATTERNS } from './api.ts';
import type { CatalogueEntry } from './entry.ts';
import { PROMPT_PATTERNS } from './prompt.ts';

export type { CatalogueEntry, Category } from './entry.ts';

export const CATALOGUE: readonly CatalogueEntry[] = [...PROMPT_PATTERNS, ...AGENT_PATTERNS, ...API_PATTERNS];

export interface CompiledPattern {
  readonly entry: CatalogueEntry;
  readonly regex: RegExp;
}

export interface CompiledCatalogue {
  readonly size: number;
  /** Patterns that apply to a kind, in catalogue order. */
  forKind(kind: InspectKind): readonly CompiledPattern[];
  byId(id: string): CatalogueEntry | undefined;
}

export function compileCatalogue(entries: readonly CatalogueEntry[] = CATALOGUE): CompiledCatalogue {
  const seen = new Map<string, CatalogueEntry>();
  const compiled: CompiledPattern[] = [];
  for (const entry of entries) {
    if (seen.has(entry.id)) throw new Error(`detection catalogue: duplicate pattern id ${entry.id}`);
    if (!(entry.weight > 0 && entry.weight <= 1)) throw new Error(`detection catalogue: weight of ${entry.id} must be in (0, 1]`);
    if (entry.keywords.length === 0 || entry.keywords.some((keyword) => keyword.length === 0 || keyword !== keyword.toLowerCase())) {
      throw new Error(`detection catalogue: ${entry.id} needs lower-case keywords`);
    }
    seen.set(entry.id, entry);
    compiled.push({ entry, regex: new RegExp(entry.pattern, 'm') });
  }
  const byKind = new Map<InspectKind, CompiledPattern[]>();
  for (const kind of ['prompt', 'tool_output', 'http'] as const) byKind.set(kind, compiled.filter((pattern) => pattern.entry.kinds.includes(kind)));
  return {
    size: compiled.length,
    forKind: (kind) => byKind.get(kind) ?? [],
    byId: (id) => seen.get(id),
  };
}
