/**
 * Structural layer: JSON output parsed and validated against a JSON Schema (when the request
 * sends `response_schema` or `response_format` json_object/json_schema, or the org's policy
 * requires JSON), tool-call arguments validated against the request's `tools` parameter schemas,
 * and fenced code blocks closed. Every schema is untrusted: before ajv sees it, schema-limits.ts
 * bounds its size, depth, complexity, branches, enums, patterns and refs (a ref cycle on one value refused),
 * in time linear in its JSON; a schema's `pattern`/`patternProperties` must pass the same
 * linear-time check as policy regexes, since ajv runs them with V8's backtracking engine. Compiled
 * schemas are cached by their JSON text (bounded in entries and in size, below), and ajv's own
 * registry forgets each schema once compiled. Validating a response is bounded by a dry run of its
 * cost (VALIDATION_STEPS per layer run). Fails closed.
 */
import { LRUCache } from 'lru-cache';
import { Ajv, type ValidateFunction } from 'ajv';
import canonicalize from 'canonicalize';
import ajvEqual from 'ajv/dist/runtime/equal.js';
import { compileSafeRegex, regexInputLimit } from './regex-safety.ts';
import { checkPatterns, measureSchema, SCHEMA_LIMITS, VALIDATION_STEPS, withinValidationBudget, type SchemaRefusal } from './schema-limits.ts';
import type { Finding, LayerResult, ToolInput, VerifyInput } from './types.ts';

export interface StructuralPolicy {
  require_json: boolean;
  json_schema: Record<string, unknown> | null;
  check_code_fences: boolean;
  check_tool_arguments: boolean;
}

/**
 * ajv's regular-expression engine: the same acceptance rule as policy regexes (a refused pattern
 * makes the schema unusable), and a string longer than the pattern's input limit does not match
 * (a `pattern` keyword then fails closed as a schema violation).
 */
const boundedRegExp = Object.assign(
  (pattern: string, flags: string) => {
    const outcome = compileSafeRegex(pattern, flags);
    if ('refused' in outcome) throw new Error(`pattern refused: ${outcome.refused}`);
    const { regex } = outcome;
    const limit = regexInputLimit(regex);
    return { test: (text: string) => text.length <= limit && regex.test(text), toString: () => regex.toString() };
  },
  { code: 'boundedRegExp' },
);
/**
 * Options chosen for compile time on untrusted schemas (docs/decisions.md): `inlineRefs: false`
 * compiles each ref target once instead of copying it into every referrer; no optimisation pass
 * (it cost more than half of compiling); no message strings (findings use the keyword and path);
 * enums of 4 values or more tested in a loop; no logger (a failed compile would print the generated code).
 */
const ajv = new Ajv({
  allErrors: false,
  strict: false,
  validateFormats: false,
  inlineRefs: false,
  messages: false,
  loopEnum: 4,
  logger: false,
  code: { regExp: boundedRegExp, optimize: false },
});
// ajv's deep equality (fast-deep-equal); the default import is the CommonJS module under Node, the function under some loaders.
const deepEqual: (first: unknown, second: unknown) => boolean = typeof ajvEqual === 'function' ? ajvEqual : (ajvEqual as unknown as { default: (first: unknown, second: unknown) => boolean }).default;

/**
 * uniqueItems by canonical JSON in a Set (linear) instead of ajv's pairwise deep equality
 * (quadratic: 20,000 objects took 5 s). ajv checks a schema's own `enum` against its meta-schema
 * with this keyword too (60,000 values: 8.5 s before, 40 ms now). canonicalize throws on a string
 * with a lone surrogate (model output can hold one); such items can only equal each other, and are
 * compared pairwise with deep equality.
 */
export function allUnique(data: readonly unknown[]): boolean {
  const keys = new Set<string>();
  const uncanonical: unknown[] = [];
  for (const item of data) {
    let key: string | undefined;
    try {
      key = canonicalize(item);
    } catch {
      if (uncanonical.some((other) => deepEqual(other, item))) return false;
      uncanonical.push(item);
      continue;
    }
    if (key === undefined) continue;
    if (keys.has(key)) return false;
    keys.add(key);
  }
  return true;
}
ajv.removeKeyword('uniqueItems');
ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', validate: (unique: boolean, data: unknown[]) => !unique || allUnique(data) });

/** A schema ajv compiled, with what the validation budget needs. */
export interface CompiledSchema {
  validate: ValidateFunction;
  schema: Record<string, unknown>;
  complexity: number;
  targets: ReadonlyMap<string, unknown>;
  quadratic: ReadonlySet<string>;
}

/**
 * Bounded twice: 256 entries, and about 32 MiB counted as the JSON text plus 256 bytes a unit of
 * complexity (a compiled schema at the complexity limit holds about 355 KiB of heap): about 50
 * schemas at the limits, 256 ordinary ones.
 */
const compiledSchemas = new LRUCache<string, CompiledSchema | SchemaRefusal>({
  max: 256,
  maxSize: 32 * 1_048_576,
  sizeCalculation: (value, key) => key.length + ('validate' in value ? 256 * value.complexity : 0) + 1,
});

/** Complexity of the schemas one layer run may compile (cache misses): two schemas at the limit. */
const COMPILE_BUDGET = 2 * SCHEMA_LIMITS.complexity;

/**
 * Checks (schema-limits.ts), then compiles (cached by JSON text) a JSON Schema; a SchemaRefusal
 * when it is not usable. With `budget`, a schema that is not cached spends its complexity from
 * it, and is refused (`schema_compile_budget_spent`, not cached) when too little is left.
 */
export function compileSchema(schema: Record<string, unknown>, budget?: { complexity: number }): CompiledSchema | SchemaRefusal {
  // A hit is found by the JSON text alone, without measuring again (schemas that reach here come
  // from bodies nested 128 levels at most; a deeper one that cannot be serialized is measured and refused).
  let key: string | undefined;
  try {
    key = JSON.stringify(schema);
  } catch {
    key = undefined;
  }
  const hit = key === undefined ? undefined : compiledSchemas.get(key);
  if (hit !== undefined) return hit;
  const shape = measureSchema(schema);
  if ('error' in shape) return shape;
  if (budget !== undefined) {
    if (shape.complexity > budget.complexity) return { error: 'schema_compile_budget_spent', limit: COMPILE_BUDGET };
    budget.complexity -= shape.complexity;
  }
  let outcome: CompiledSchema | SchemaRefusal;
  const patterns = checkPatterns(shape.patterns);
  if ('error' in patterns) outcome = patterns;
  else {
    const registered = new Set(Object.keys(ajv.refs));
    try {
      outcome = { validate: ajv.compile(schema), schema, complexity: shape.complexity, targets: shape.targets, quadratic: patterns.quadratic };
    } catch {
      outcome = { error: 'schema_invalid' };
    } finally {
      // ajv keeps every compiled schema (keyed by object) and every $id it met: unbounded, and a
      // second schema with the same $id would be refused. The validate function needs neither.
      ajv.removeSchema(schema);
      for (const key of Object.keys(ajv.refs)) if (!registered.has(key)) ajv.removeSchema(key);
    }
  }
  // A refusal for want of pattern scans depends on regex-safety's overlap cache: not kept, so the same schema is checked afresh.
  if (!('error' in outcome) || outcome.error !== 'schema_too_many_pattern_checks') compiledSchemas.set(shape.text, outcome);
  return outcome;
}

/** The JSON text of a response: the whole content, or the body of one fenced ```json block around it. */
function jsonText(content: string): { text: string; offset: number } {
  const trimmed = content.trim();
  const fenced = /^```[a-zA-Z]*\n([^]*)\n```$/.exec(trimmed);
  if (fenced !== null) return { text: fenced[1]!, offset: content.indexOf(fenced[1]!) };
  return { text: content, offset: 0 };
}

function toolSchemas(tools: readonly ToolInput[]): Map<string, Record<string, unknown>> {
  const map = new Map<string, Record<string, unknown>>();
  for (const tool of tools) {
    const flat = 'function' in tool ? tool.function : tool;
    map.set(flat.name, flat.parameters ?? { type: 'object' });
  }
  return map;
}

export function structuralLayer(input: VerifyInput, policy: StructuralPolicy): LayerResult {
  const findings: Finding[] = [];
  const compileBudget = { complexity: COMPILE_BUDGET };
  const steps = { steps: VALIDATION_STEPS };
  const schema = input.schema ?? policy.json_schema;
  const wantsJson = schema !== null || input.expectJson === true || policy.require_json;
  const checks: string[] = [];
  const end = input.content.length;
  if (wantsJson) {
    checks.push('json');
    const { text, offset } = jsonText(input.content);
    let value: unknown;
    let parsed = false;
    try {
      value = JSON.parse(text);
      parsed = true;
    } catch (error) {
      const position = /position (\d+)/.exec(error instanceof Error ? error.message : '');
      const at = position === null ? 0 : Math.min(end, offset + Number(position[1]));
      findings.push({ start: at, end, reason: 'invalid_json' });
    }
    if (parsed && schema !== null) {
      checks.push('json_schema');
      const compiled = compileSchema(schema, compileBudget);
      if ('error' in compiled) findings.push({ start: 0, end: 0, reason: 'schema_unusable', detail: compiled.error });
      else if (!withinValidationBudget(compiled.schema, compiled, value, steps)) findings.push({ start: 0, end, reason: 'schema_validation_too_costly', detail: `more than ${VALIDATION_STEPS} steps` });
      else if (!compiled.validate(value)) {
        for (const error of compiled.validate.errors ?? []) findings.push({ start: 0, end, reason: 'schema_violation', detail: `${error.instancePath || '/'} ${error.keyword}` });
      }
    }
  }
  if (policy.check_tool_arguments && input.toolCalls !== undefined && input.toolCalls.length > 0) {
    checks.push('tool_arguments');
    const schemas = toolSchemas(input.tools ?? []);
    input.toolCalls.forEach((call, index) => {
      const detail = `tool_calls[${index}] ${call.name}`;
      const toolSchema = schemas.get(call.name);
      if (toolSchema === undefined) {
        findings.push({ start: 0, end: 0, reason: 'unknown_tool', detail });
        return;
      }
      let args: unknown;
      try {
        args = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
      } catch {
        findings.push({ start: 0, end: 0, reason: 'invalid_tool_arguments', detail });
        return;
      }
      const compiled = compileSchema(toolSchema, compileBudget);
      if ('error' in compiled) return;
      if (!withinValidationBudget(compiled.schema, compiled, args, steps)) {
        findings.push({ start: 0, end: 0, reason: 'schema_validation_too_costly', detail });
        return;
      }
      const { validate } = compiled;
      if (!validate(args)) findings.push({ start: 0, end: 0, reason: 'tool_arguments_schema_violation', detail: `${detail} ${validate.errors?.[0]?.instancePath || '/'} ${validate.errors?.[0]?.keyword ?? ''}`.trim() });
    });
  }
  if (policy.check_code_fences) {
    checks.push('code_fences');
    const fence = unclosedFence(input.content);
    if (fence !== null) findings.push({ start: fence, end, reason: 'unclosed_code_fence' });
  }
  return { verdict: findings.length > 0 ? 'fail' : 'pass', score: findings.length > 0 ? 1 : 0, findings, ms: 0, fails: 'closed', info: { checks } };
}

/** Offset of an opening ``` or ~~~ fence line with no closing line, else null. */
export function unclosedFence(content: string): number | null {
  if (!content.includes('```') && !content.includes('~~~')) return null;
  let open: { at: number; marker: string } | null = null;
  let lineStart = 0;
  while (lineStart <= content.length) {
    let lineEnd = content.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = content.length;
    const line = content.slice(lineStart, lineEnd).trimStart();
    const marker = line.startsWith('```') ? '```' : line.startsWith('~~~') ? '~~~' : null;
    if (marker !== null) {
      if (open === null) open = { at: lineStart, marker };
      else if (marker === open.marker && line.slice(3).trim() === '') open = null;
    }
    lineStart = lineEnd + 1;
  }
  return open === null ? null : open.at;
}
