/**
 * The shape of a catalogue pattern. The catalogue is data: arrays of entries, compiled once at
 * load. Patterns are written in lower case and run on lower-cased normalized variants; each one
 * must be linear-time (a test runs the recheck ReDoS analyser over all of them) and carries the
 * literal keywords that a match necessarily contains (a cheap prefilter: the regular expression
 * runs only when one keyword occurs) plus attack examples it must match (self-test).
 */
import type { InspectKind } from '../types.ts';

export type Category =
  | 'prompt-injection'
  | 'jailbreak'
  | 'system-prompt-extraction'
  | 'context-poisoning'
  | 'agent-impersonation'
  | 'exfiltration'
  | 'prompt-chaining'
  | 'sleeper-payload'
  | 'tool-poisoning'
  | 'sqli'
  | 'xss'
  | 'path-traversal'
  | 'command-injection'
  | 'code-injection'
  | 'ssrf'
  | 'auth-bypass'
  | 'mass-assignment'
  | 'token-manipulation'
  | 'xxe'
  | 'ldap-injection'
  | 'nosql-injection'
  | 'crlf-injection'
  | 'open-redirect'
  | 'file-inclusion'
  | 'scanner'
  | 'format-string'
  | 'protocol-violation';

export interface CatalogueEntry {
  /** Stable id, "<family>.<name>"; never reused. */
  readonly id: string;
  readonly name: string;
  readonly category: Category;
  /** 0..1: confidence that a match alone is an attack (> 0.9 blocks immediately). */
  readonly weight: number;
  /** Regular-expression source (lower case, no flags). */
  readonly pattern: string;
  /** Lower-case literals of which at least one occurs in every match. */
  readonly keywords: readonly string[];
  readonly kinds: readonly InspectKind[];
  /** Attack strings written for the self-test; each must match. */
  readonly examples: readonly string[];
}

export const TEXT_KINDS: readonly InspectKind[] = ['prompt', 'tool_output'];
export const HTTP_KINDS: readonly InspectKind[] = ['http'];
export const ALL_KINDS: readonly InspectKind[] = ['prompt', 'tool_output', 'http'];
