/**
 * Per-org verification policy: the admin endpoint's body (every field optional), its defaults,
 * its validation and its resolution into the compiled form the layers use. Regular expressions
 * are checked linear-time at save (regex-safety.ts); JSON Schemas are bounded (schema-limits.ts)
 * and compiled by ajv at save.
 */
import { Type, type Static } from '@sinclair/typebox';
import { compileSafeRegex, MAX_CLASS_COMPARISONS, type ScanBudget } from './regex-safety.ts';
import { schemaRefusalMessage, type SchemaRefusal } from './schema-limits.ts';
import { compileSchema } from './structural.ts';
import { ACTIONS, type Action, type LayerName } from './types.ts';

const ActionSchema = Type.Union(ACTIONS.map((action) => Type.Literal(action)));
const Phrase = Type.String({ minLength: 1, maxLength: 256 });
const Pattern = Type.String({ minLength: 1, maxLength: 512 });

/**
 * Class-against-class scans (regex-safety.ts, 10–40 ms each) that a policy's `must_match` and
 * `must_not_match` patterns may need together when they are not already in the overlap cache: what
 * one pattern may need alone. Each pattern had its own 8, so 128 patterns with new classes held the
 * process for 7 s on one guard request. A stored policy being loaded is not limited: it was bounded when it was saved,
 * and a rule must not go inactive because the cache was cold.
 */
export const POLICY_PATTERN_SCANS = MAX_CLASS_COMPARISONS;
/**
 * Class-against-class comparisons (cached or not) and atom comparisons of any kind those patterns
 * may need together: counted whatever the cache holds, so a policy accepted once costs at most
 * this much again when it is loaded on a cold cache. A pattern of 256 literals each with `*` needed
 * 32,000 literal comparisons; 128 of them held one guard request 15 s.
 */
export const POLICY_CLASS_COMPARISONS = 64;
export const POLICY_ATOM_COMPARISONS = 2_048;

export const PolicySchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    actions: Type.Optional(
      Type.Object(
        { integrity: Type.Optional(ActionSchema), grounding: Type.Optional(ActionSchema), structural: Type.Optional(ActionSchema), constraint: Type.Optional(ActionSchema) },
        { additionalProperties: false },
      ),
    ),
    stream: Type.Optional(
      Type.Object(
        {
          hold_back_chars: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_096 })),
          on_failure: Type.Optional(Type.Union([Type.Literal('redact'), Type.Literal('end')])),
        },
        { additionalProperties: false },
      ),
    ),
    integrity: Type.Optional(Type.Object({ flag_truncation: Type.Optional(Type.Boolean()), flag_invisible: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
    grounding: Type.Optional(
      Type.Object(
        {
          threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          judge: Type.Optional(
            Type.Object(
              {
                enabled: Type.Optional(Type.Boolean()),
                timeout_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 30_000 })),
                band: Type.Optional(Type.Tuple([Type.Number({ minimum: 0, maximum: 1 }), Type.Number({ minimum: 0, maximum: 1 })])),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    structural: Type.Optional(
      Type.Object(
        {
          require_json: Type.Optional(Type.Boolean()),
          json_schema: Type.Optional(Type.Union([Type.Null(), Type.Record(Type.String(), Type.Unknown())])),
          check_code_fences: Type.Optional(Type.Boolean()),
          check_tool_arguments: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    constraint: Type.Optional(
      Type.Object(
        {
          max_chars: Type.Optional(Type.Union([Type.Null(), Type.Integer({ minimum: 1, maximum: 10_000_000 })])),
          banned_phrases: Type.Optional(Type.Array(Phrase, { maxItems: 256 })),
          required_phrases: Type.Optional(Type.Array(Phrase, { maxItems: 64 })),
          must_match: Type.Optional(Type.Array(Pattern, { maxItems: 64 })),
          must_not_match: Type.Optional(Type.Array(Pattern, { maxItems: 64 })),
          allowed_url_hosts: Type.Optional(Type.Union([Type.Null(), Type.Array(Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' }), { maxItems: 256 })])),
          pii: Type.Optional(Type.Union([Type.Literal('off'), Type.Literal('secrets'), Type.Literal('all')])),
          system_prompt_leak: Type.Optional(Type.Boolean()),
          detect_refusal: Type.Optional(Type.Boolean()),
          flag_refusal: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type PolicyBody = Static<typeof PolicySchema>;

export interface ResolvedPolicy {
  enabled: boolean;
  actions: Record<LayerName, Action>;
  stream: { hold_back_chars: number; on_failure: 'redact' | 'end' };
  integrity: { flag_truncation: boolean; flag_invisible: boolean };
  grounding: { threshold: number; judge: { enabled: boolean; timeout_ms: number; band: [number, number] } };
  structural: { require_json: boolean; json_schema: Record<string, unknown> | null; check_code_fences: boolean; check_tool_arguments: boolean };
  constraint: {
    max_chars: number | null;
    banned_phrases: string[];
    required_phrases: string[];
    must_match: string[];
    must_not_match: string[];
    allowed_url_hosts: string[] | null;
    pii: 'off' | 'secrets' | 'all';
    system_prompt_leak: boolean;
    detect_refusal: boolean;
    flag_refusal: boolean;
  };
  /**
   * Compiled forms (not part of the API shape). A regex rule that is inactive (a stored pattern
   * today's rule refuses) is `null` at its index and never compiled; `inactive` says why.
   */
  compiled: { mustMatch: Array<RegExp | null>; mustNotMatch: Array<RegExp | null>; bannedLower: string[]; requiredLower: string[]; inactive: InactiveRule[] };
}

/** A stored rule that today's validation refuses: skipped (never compiled), shown on GET, named in results. */
export interface InactiveRule {
  /** Layer the rule belongs to. */
  layer: 'structural' | 'constraint';
  /** The rule's path in the policy body, e.g. `constraint.must_match[1]`. */
  rule: string;
  /** Stable reason, the same code a PUT of the rule answers (`regex_multiple_unbounded_quantifiers`, `schema_pattern_not_linear`). */
  inactive_reason: string;
}

export interface ResolveOptions {
  /**
   * `refuse` (PUT, guard API): a refused pattern throws PolicyError. `skip` (loading a stored
   * policy): a refused regex or JSON Schema becomes an inactive rule and the rest applies.
   */
  refusedRules?: 'refuse' | 'skip';
  /** A resolved policy whose compiled pattern lists are taken over where the body's lists are the same. */
  reuse?: ResolvedPolicy;
}

/**
 * Defaults: every layer annotates (content unchanged); integrity on; grounding runs tier 1 when
 * the request has sources; structural checks fences and tool arguments (JSON only when asked);
 * constraint looks for secrets (not all PII: the gateway may restore the caller's own PII into
 * answers) and system-prompt leaks, and detects refusals without failing them. Hold-back 128
 * characters, on a mid-stream failure redact.
 */
export const DEFAULT_POLICY_BODY: Required<Omit<PolicyBody, 'compiled'>> = {
  enabled: true,
  actions: { integrity: 'annotate', grounding: 'annotate', structural: 'annotate', constraint: 'annotate' },
  stream: { hold_back_chars: 128, on_failure: 'redact' },
  integrity: { flag_truncation: true, flag_invisible: true },
  grounding: { threshold: 0.5, judge: { enabled: false, timeout_ms: 2_000, band: [0.35, 0.65] } },
  structural: { require_json: false, json_schema: null, check_code_fences: true, check_tool_arguments: true },
  constraint: {
    max_chars: null,
    banned_phrases: [],
    required_phrases: [],
    must_match: [],
    must_not_match: [],
    allowed_url_hosts: null,
    pii: 'secrets',
    system_prompt_leak: true,
    detect_refusal: true,
    flag_refusal: false,
  },
};

export class PolicyError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
    message: string,
    /** More details for the 400 beside field and reason (a schema limit and the value found). */
    readonly details: Readonly<Record<string, number>> = {},
  ) {
    super(message);
  }
}

/** A refused JSON Schema as 400 details: `reason`, and `limit` / `actual` when it exceeded one. */
export function refusalDetails(refusal: SchemaRefusal): { reason: string; limit?: number; actual?: number } {
  return { reason: refusal.error, ...(refusal.limit === undefined ? {} : { limit: refusal.limit }), ...(refusal.actual === undefined ? {} : { actual: refusal.actual }) };
}

/** Defaults merged with the stored body, validated and compiled. Throws PolicyError naming the field. */
export function resolvePolicy(body: PolicyBody = {}, options: ResolveOptions = {}): ResolvedPolicy {
  const skip = options.refusedRules === 'skip';
  const inactive: InactiveRule[] = [];
  const base = DEFAULT_POLICY_BODY;
  const policy = {
    enabled: body.enabled ?? base.enabled,
    actions: { ...base.actions, ...body.actions } as Record<LayerName, Action>,
    stream: { ...base.stream, ...body.stream } as ResolvedPolicy['stream'],
    integrity: { ...base.integrity, ...body.integrity } as ResolvedPolicy['integrity'],
    grounding: { ...base.grounding, ...body.grounding, judge: { ...base.grounding.judge, ...body.grounding?.judge } } as ResolvedPolicy['grounding'],
    structural: { ...base.structural, ...body.structural } as ResolvedPolicy['structural'],
    constraint: { ...base.constraint, ...body.constraint } as ResolvedPolicy['constraint'],
  };
  const [low, high] = policy.grounding.judge.band;
  if (low > high) throw new PolicyError('body.grounding.judge.band', 'band_inverted', 'grounding.judge.band must be [low, high] with low ≤ high');
  const budget: ScanBudget = skip ? { scans: Number.POSITIVE_INFINITY } : { scans: POLICY_PATTERN_SCANS, classComparisons: POLICY_CLASS_COMPARISONS, comparisons: POLICY_ATOM_COMPARISONS };
  const compile = (list: string[], field: string) =>
    list.map((source, index) => {
      const outcome = compileWithin(source, budget);
      if ('refused' in outcome && budget.exhausted === true) {
        const [limit, what] =
          budget.comparisons === 0 ? [POLICY_ATOM_COMPARISONS, 'atom comparisons in all'] : budget.classComparisons === 0 ? [POLICY_CLASS_COMPARISONS, 'character-class comparisons in all'] : [POLICY_PATTERN_SCANS, 'character-class comparisons not already checked'];
        throw new PolicyError(`body.constraint.${field}[${index}]`, 'regex_too_many_pattern_checks', `constraint.${field}[${index}] needs more pattern checks than a policy may: the must_match and must_not_match patterns together may need ${limit} ${what}; use fewer unbounded quantifiers (*, +) and fewer distinct character classes beside them`, { limit });
      }
      if ('refused' in outcome && skip) {
        inactive.push({ layer: 'constraint', rule: `constraint.${field}[${index}]`, inactive_reason: `regex_${outcome.refused}` });
        return null;
      }
      if ('refused' in outcome) throw new PolicyError(`body.constraint.${field}[${index}]`, `regex_${outcome.refused}`, `constraint.${field}[${index}] is refused (${outcome.refused}): only bounded-time patterns are accepted — no backreferences, lookarounds, nested quantifiers or quantified alternations; at most one unbounded quantifier (*, +, {n,}) unless each is followed only by characters it cannot match (\\s*\\S+); bounded repeats at most {0,100}; at most 512 characters`);
      return outcome.regex;
    });
  if (policy.structural.json_schema !== null) {
    const compiled = compileSchema(policy.structural.json_schema);
    if ('error' in compiled && skip) {
      inactive.push({ layer: 'structural', rule: 'structural.json_schema', inactive_reason: compiled.error });
      policy.structural = { ...policy.structural, json_schema: null };
    } else if ('error' in compiled) {
      const { reason, ...limits } = refusalDetails(compiled);
      throw new PolicyError('body.structural.json_schema', reason, `structural.json_schema is not a usable JSON Schema (${reason}): ${schemaRefusalMessage(compiled)}`, limits);
    }
  }
  // A list the policy takes over unchanged from `reuse` (the stored policy under a guard request's
  // own rules) keeps its compiled patterns and inactive rules: not compiled again, whatever the cache holds.
  const reuse = options.reuse;
  const compiledOf = (field: 'must_match' | 'must_not_match') => {
    const list = policy.constraint[field];
    const previous = reuse?.constraint[field];
    if (reuse === undefined || previous === undefined || previous.length !== list.length || previous.some((source, index) => source !== list[index])) return compile(list, field);
    inactive.push(...reuse.compiled.inactive.filter((rule) => rule.rule.startsWith(`constraint.${field}[`)));
    return field === 'must_match' ? reuse.compiled.mustMatch : reuse.compiled.mustNotMatch;
  };
  const mustMatch = compiledOf('must_match');
  const mustNotMatch = compiledOf('must_not_match');
  return {
    ...policy,
    compiled: {
      mustMatch,
      mustNotMatch,
      bannedLower: policy.constraint.banned_phrases.map((phrase) => phrase.toLowerCase()),
      requiredLower: policy.constraint.required_phrases.map((phrase) => phrase.toLowerCase()),
      inactive,
    },
  };
}

/** compileSafeRegex under a shared budget; `budget.exhausted` then tells a refusal for want of scans from a real one. */
function compileWithin(source: string, budget: ScanBudget): ReturnType<typeof compileSafeRegex> {
  budget.exhausted = false;
  return compileSafeRegex(source, 'u', budget);
}

export const DEFAULT_POLICY: ResolvedPolicy = resolvePolicy();

/** The API view of a resolved policy (no compiled parts; inactive rules are listed beside it, see PolicyStore.view). */
export function policyView(policy: ResolvedPolicy): Omit<ResolvedPolicy, 'compiled'> {
  const { compiled: _compiled, ...view } = policy;
  return view;
}
