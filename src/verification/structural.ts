/**
 * Structural layer: JSON output parsed and validated against a JSON Schema (when the request
 * sends `response_schema` or `response_format` json_object/json_schema, or the org's policy
 * requires JSON), tool-call arguments validated against the request's `tools` parameter schemas,
 * and fenced code blocks closed. Schemas are compiled by ajv (cached by their JSON text, at most
 * 256); a schema's `pattern`/`patternProperties` must pass the same linear-time check as policy
 * regexes, since ajv runs them with V8's backtracking engine. Fails closed.
 */
import { LRUCache } from 'lru-cache';
import { Ajv, type ValidateFunction } from 'ajv';
import { compileSafeRegex, regexInputLimit } from './regex-safety.ts';
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
const ajv = new Ajv({ allErrors: false, strict: false, validateFormats: false, code: { regExp: boundedRegExp } });
const compiledSchemas = new LRUCache<string, ValidateFunction | { error: string }>({ max: 256 });

/** Compiles (cached) a JSON Schema; `{ error }` when it is not usable. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction | { error: string } {
  const key = JSON.stringify(schema);
  const hit = compiledSchemas.get(key);
  if (hit !== undefined) return hit;
  let outcome: ValidateFunction | { error: string };
  const unsafe = unsafePattern(schema, 0);
  if (unsafe !== null) outcome = { error: unsafe };
  else {
    try {
      outcome = ajv.compile(schema);
    } catch {
      outcome = { error: 'schema_invalid' };
    }
  }
  compiledSchemas.set(key, outcome);
  return outcome;
}

function unsafePattern(node: unknown, depth: number): string | null {
  if (depth > 64) return 'schema_too_deep';
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = unsafePattern(item, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  if (node === null || typeof node !== 'object') return null;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'pattern' && typeof value === 'string' && 'refused' in compileSafeRegex(value)) return 'schema_pattern_not_linear';
    if (key === 'patternProperties' && value !== null && typeof value === 'object') {
      for (const pattern of Object.keys(value)) if ('refused' in compileSafeRegex(pattern)) return 'schema_pattern_not_linear';
    }
    const found = unsafePattern(value, depth + 1);
    if (found !== null) return found;
  }
  return null;
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
      const validate = compileSchema(schema);
      if ('error' in validate) findings.push({ start: 0, end: 0, reason: 'schema_unusable', detail: validate.error });
      else if (!validate(value)) {
        for (const error of validate.errors ?? []) findings.push({ start: 0, end, reason: 'schema_violation', detail: `${error.instancePath || '/'} ${error.keyword}` });
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
      const validate = compileSchema(toolSchema);
      if ('error' in validate) return;
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
