/**
 * Bounds on a JSON Schema before ajv compiles it, and on the work of validating one response
 * against it. Every schema the structural layer gets comes from a client (the guard API's
 * `schema`, a completion's `response_schema` and `tools`) or an org admin (the policy's
 * `structural.json_schema`), so it is untrusted: ajv's compile time grows faster than the schema
 * (3,000 anyOf branches took 37 s, the process answering nothing meanwhile), and some shapes make
 * validation itself exponential (a `$ref` cycle under anyOf, refs that expand 2^n times). Posture:
 * a schema is first walked once, without recursion, in time linear in its JSON, and refused with
 * the first limit it exceeds; only a schema inside every limit is serialized, cached and compiled.
 * A recursive `$ref` is accepted only when each cycle moves to a child value (a tree schema); one
 * that stays on the same value is refused. Validating one response is then bounded by a dry run
 * (`withinValidationBudget`) that counts, without evaluating any keyword, the work ajv may do, and
 * stops at VALIDATION_STEPS. The limits and the compile times they were chosen from:
 * docs/verification.md ("Limits on JSON Schemas") and docs/decisions.md.
 */
import { compileSafeRegex, regexInputLimit, UNBOUNDED_REGEX_INPUT_LIMIT, type ScanBudget } from './regex-safety.ts';

export const SCHEMA_LIMITS = {
  /** Nesting of JSON objects and arrays. */
  depth: 64,
  /** Characters of the schema's JSON text. */
  chars: 262_144,
  /**
   * Size in keywords, which ajv's compile time follows: every JSON object of the schema counts 1
   * and each of its members 1, except `title`, `description` and `$comment` (free) and `enum` (2,
   * as its code costs twice a keyword's); objects under enum, const, default or examples count
   * too. A property `{ "type": "string", "description": … }` costs 3 (the object, its `type`,
   * its name in `properties`).
   */
  complexity: 1_500,
  /** Items of one anyOf, oneOf or allOf. */
  branches: 64,
  /** Values of one enum. */
  enumValues: 1_000,
  /** `pattern` keywords plus `patternProperties` keys. */
  patterns: 64,
  /**
   * Uncached class-against-class scans (10–40 ms each, regex-safety.ts) the schema's patterns may
   * need together. Depends on regex-safety's overlap cache, so its refusal is never cached (structural.ts).
   */
  patternScans: 2,
  /** Atom comparisons of any kind the schema's patterns may need together (regex-safety.ts: they grow with the square of a pattern's atoms). */
  patternComparisons: 2_048,
  /** `$ref` members. */
  refs: 256,
  /** Complexity once every `$ref` is replaced by its target, recursively. */
  expandedComplexity: 10_000,
} as const;

/**
 * Steps one structural layer run may spend validating (the response and its tool calls together).
 * A step is about 100 ns of ajv's worst case: one subschema applied to one value (a oneOf branch
 * with its error objects, a function call through a `$ref`). Keyword loops count in the same unit
 * (below). About 50 ms at most.
 */
export const VALIDATION_STEPS = 500_000;
const ENUM_VALUES_PER_STEP = 16;
const REQUIRED_NAMES_PER_STEP = 16;
/** A pattern with no unbounded quantifier tries up to 100 repeats from each start: 3 steps a character (measured 19 ms on 65,536). */
const LINEAR_PATTERN_STEPS_PER_CHAR = 3;
/** One with its unbounded quantifier is quadratic: length² / 128 steps (measured 10 ms on 4,096). */
const QUADRATIC_PATTERN_CHARS_SQUARED_PER_STEP = 128;

/**
 * A refused schema: a stable reason (the `reason` of the 400, the `detail` of `schema_unusable`)
 * and, for a limit, the limit and the value found (`actual` absent when the walk stopped before
 * measuring it whole).
 */
export interface SchemaRefusal {
  error: string;
  limit?: number;
  actual?: number;
}

/** What the walk learnt of a schema inside the limits: its JSON text (the cache key) and what compiling and budgeting need. */
export interface SchemaShape {
  text: string;
  complexity: number;
  patterns: readonly string[];
  /** Each `$ref` string of the schema and the subschema (object or boolean) it points to. */
  targets: ReadonlyMap<string, unknown>;
}

interface Container {
  /** Visit order of the container and of its last descendant: a subtree is a contiguous range. */
  first: number;
  last: number;
  /** Complexity of the subtree, itself included. */
  complexity: number;
  /** Keywords on the path from the root that move validation to a child value (DESCENDING). */
  descents: number;
}

/**
 * What a JSON value of the schema is: a schema (its members are keywords), a map of names to
 * schemas (`properties`, `definitions`, …) or a list of schemas (`allOf`, array `items`, …).
 */
type Role = 'schema' | 'map' | 'list';
type Frame = { value: object; depth: number; descents: number; role: Role } | { exit: Container; complexityBefore: number };

const COMBINATORS = new Set(['anyOf', 'oneOf', 'allOf']);
/** Keywords whose subschemas apply to a child value (an item, a property's value or name), not to the value itself. */
const DESCENDING = new Set(['items', 'prefixItems', 'additionalItems', 'contains', 'unevaluatedItems', 'additionalProperties', 'unevaluatedProperties', 'propertyNames', 'properties', 'patternProperties']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas', 'dependencies']);
/** Annotations: no code is generated for them. */
const FREE_MEMBERS = new Set(['title', 'description', '$comment']);

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Walks `schema` once (an explicit stack, so any depth is safe) and checks every limit but the
 * patterns' (checkPatterns, run only when the schema is not already compiled). The walk stops at
 * the first level deeper than the limit, as soon as the complexity is over its limit, or after
 * SCHEMA_LIMITS.chars values (a schema within the size limit has fewer), so it costs little more
 * than the limits allow whatever it is given; a limit found that way has no `actual`.
 */
export function measureSchema(schema: Record<string, unknown>): SchemaShape | SchemaRefusal {
  const containers = new Map<object, Container>();
  const refs: Array<{ owner: number; ref: string; descents: number }> = [];
  const patterns: string[] = [];
  let visits = 0;
  let complexity = 0;
  let values = 0;
  let branches = 0;
  let enumValues = 0;
  let nestedId = false;
  const stack: Frame[] = [{ value: schema, depth: 1, descents: 0, role: 'schema' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if ('exit' in frame) {
      frame.exit.last = visits - 1;
      frame.exit.complexity = complexity - frame.complexityBefore;
      continue;
    }
    const { value, depth, descents, role } = frame;
    if (depth > SCHEMA_LIMITS.depth) return { error: 'schema_too_deep', limit: SCHEMA_LIMITS.depth };
    const container: Container = { first: visits, last: visits, complexity: 0, descents };
    visits += 1;
    containers.set(value, container);
    stack.push({ exit: container, complexityBefore: complexity });
    const children = Array.isArray(value) ? value : Object.values(value);
    values += children.length;
    if (values > SCHEMA_LIMITS.chars) return { error: 'schema_too_large', limit: SCHEMA_LIMITS.chars };
    if (!Array.isArray(value)) {
      complexity += 1;
      for (const [key, child] of Object.entries(value)) {
        if (!FREE_MEMBERS.has(key)) complexity += key === 'enum' ? 2 : 1;
        if (COMBINATORS.has(key) && Array.isArray(child)) branches = Math.max(branches, child.length);
        else if (key === 'enum' && Array.isArray(child)) enumValues = Math.max(enumValues, child.length);
        else if (key === 'pattern' && typeof child === 'string') patterns.push(child);
        else if (key === 'patternProperties' && isRecord(child)) for (const pattern of Object.keys(child)) patterns.push(pattern);
        else if (key === '$ref' && typeof child === 'string') refs.push({ owner: container.first, ref: child, descents });
        else if (key === '$id' && typeof child === 'string' && depth > 1 && !child.startsWith('#')) nestedId = true;
      }
      if (complexity > SCHEMA_LIMITS.complexity) return { error: 'schema_too_complex', limit: SCHEMA_LIMITS.complexity };
    }
    if (role === 'schema' && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value)) {
        if (child === null || typeof child !== 'object') continue;
        const below = DESCENDING.has(key) ? descents + 1 : descents;
        stack.push({ value: child, depth: depth + 1, descents: below, role: SCHEMA_MAPS.has(key) ? 'map' : Array.isArray(child) ? 'list' : 'schema' });
      }
    } else for (const child of children) if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1, descents, role: 'schema' });
  }
  // Depth is bounded, so serializing cannot exhaust the stack.
  const text = JSON.stringify(schema);
  if (text.length > SCHEMA_LIMITS.chars) return { error: 'schema_too_large', limit: SCHEMA_LIMITS.chars, actual: text.length };
  const refused = countLimits(branches, enumValues, refs.length, patterns.length);
  if (refused !== null) return refused;
  return resolveRefs(schema, containers, refs, nestedId, text, complexity, patterns);
}

function countLimits(branches: number, enumValues: number, refs: number, patterns: number): SchemaRefusal | null {
  if (branches > SCHEMA_LIMITS.branches) return { error: 'schema_too_many_branches', limit: SCHEMA_LIMITS.branches, actual: branches };
  if (enumValues > SCHEMA_LIMITS.enumValues) return { error: 'schema_enum_too_large', limit: SCHEMA_LIMITS.enumValues, actual: enumValues };
  if (refs > SCHEMA_LIMITS.refs) return { error: 'schema_too_many_refs', limit: SCHEMA_LIMITS.refs, actual: refs };
  if (patterns > SCHEMA_LIMITS.patterns) return { error: 'schema_too_many_patterns', limit: SCHEMA_LIMITS.patterns, actual: patterns };
  return null;
}

const isLocalPointer = (ref: string) => ref === '#' || ref.startsWith('#/');

/** What a local JSON pointer (`#`, `#/definitions/a~1b`, percent-encoded or not) designates; `undefined` when nothing is there. */
function pointerTarget(root: Record<string, unknown>, ref: string): unknown {
  if (ref === '#') return root;
  let node: unknown = root;
  for (const encoded of ref.slice(2).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(encoded).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(segment)) node = node[Number(segment)];
    else if (isRecord(node) && Object.hasOwn(node, segment)) node = node[segment];
    else return undefined;
  }
  return node;
}

/**
 * Refs must be local pointers (ajv resolves anything else against `$id`s, which this walk does
 * not follow, so only the root may set a non-fragment `$id`). A recursive ref is accepted when
 * every cycle through it passes a DESCENDING keyword (a tree's `children: { items: { $ref: '#' } }`):
 * validation then moves to a smaller value at each turn and ends with the data. A cycle that stays
 * on the same value (`anyOf: [{ $ref: '#' }]`) would never end and is refused. Then the schema is
 * expanded — each ref counted as the complexity of its target, recursively, a target reached again
 * through a cycle counting nothing more (ajv compiles each target once, `inlineRefs: false`; the
 * validation budget bounds how often it runs). Each distinct target is expanded once per pass: at
 * most SCHEMA_LIMITS.refs² steps.
 */
function resolveRefs(
  schema: Record<string, unknown>,
  containers: ReadonlyMap<object, Container>,
  refs: ReadonlyArray<{ owner: number; ref: string; descents: number }>,
  nestedId: boolean,
  text: string,
  complexity: number,
  patterns: readonly string[],
): SchemaShape | SchemaRefusal {
  if (nestedId) return { error: 'schema_ref_unsupported' };
  const targets = new Map<string, unknown>();
  for (const { ref } of refs) {
    if (targets.has(ref)) continue;
    if (!isLocalPointer(ref)) return { error: 'schema_ref_unsupported' };
    const target = pointerTarget(schema, ref);
    if (typeof target !== 'boolean' && !isRecord(target)) return { error: 'schema_invalid' };
    targets.set(ref, target);
  }
  const firstRefIn = (container: Container) => {
    let low = 0;
    let high = refs.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (refs[middle]!.owner < container.first) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  /** The refs inside `container` with their target's container, and whether reaching the ref descends into the data. */
  const edges = function* (container: Container) {
    for (let index = firstRefIn(container); index < refs.length && refs[index]!.owner <= container.last; index += 1) {
      const target = targets.get(refs[index]!.ref);
      const inner = typeof target === 'object' && target !== null ? containers.get(target) : undefined;
      if (inner !== undefined) yield { inner, descends: refs[index]!.descents > container.descents };
    }
  };
  // Pass 1: a cycle of refs none of which descends (depth-first search over those edges only).
  const done = new Set<Container>();
  const open = new Set<Container>();
  const cycles = (container: Container): boolean => {
    if (done.has(container)) return false;
    if (open.has(container)) return true;
    open.add(container);
    for (const { inner, descends } of edges(container)) if (!descends && cycles(inner)) return true;
    open.delete(container);
    done.add(container);
    return false;
  };
  const root = containers.get(schema)!;
  if (cycles(root)) return { error: 'schema_ref_recursive' };
  // Pass 2: the expanded complexity.
  const limit = SCHEMA_LIMITS.expandedComplexity;
  const expanded = new Map<Container, number>();
  open.clear();
  const expand = (container: Container): number => {
    const known = expanded.get(container);
    if (known !== undefined) return known;
    if (open.has(container)) return 0;
    open.add(container);
    let total = container.complexity;
    for (const { inner } of edges(container)) {
      if (total > limit) break;
      total += expand(inner);
    }
    open.delete(container);
    expanded.set(container, total);
    return total;
  };
  const total = expand(root);
  if (total > limit) return { error: 'schema_ref_expansion_too_large', limit, actual: total };
  return { text, complexity, patterns, targets };
}

/**
 * The linear-time rule of regex-safety.ts for each pattern, with one scan budget for the whole
 * schema. Returns the refusal, or the patterns that have an unbounded quantifier (quadratic
 * worst case; the validation budget counts them so).
 */
export function checkPatterns(patterns: readonly string[]): SchemaRefusal | { quadratic: ReadonlySet<string> } {
  const budget: ScanBudget = { scans: SCHEMA_LIMITS.patternScans, comparisons: SCHEMA_LIMITS.patternComparisons };
  const quadratic = new Set<string>();
  for (const pattern of patterns) {
    budget.exhausted = false;
    const outcome = compileSafeRegex(pattern, 'u', budget);
    if ('refused' in outcome && budget.exhausted) return { error: 'schema_too_many_pattern_checks', limit: budget.comparisons === 0 ? SCHEMA_LIMITS.patternComparisons : SCHEMA_LIMITS.patternScans };
    if ('refused' in outcome) return { error: 'schema_pattern_not_linear' };
    if (regexInputLimit(outcome.regex) === UNBOUNDED_REGEX_INPUT_LIMIT) quadratic.add(pattern);
  }
  return { quadratic };
}

function patternSteps(pattern: string, text: string, quadratic: ReadonlySet<string>): number {
  if (!quadratic.has(pattern)) return text.length * LINEAR_PATTERN_STEPS_PER_CHAR;
  // Longer strings are not run (they fail the pattern), see boundedRegExp in structural.ts.
  if (text.length > UNBOUNDED_REGEX_INPUT_LIMIT) return 1;
  return Math.ceil((text.length * text.length) / QUADRATIC_PATTERN_CHARS_SQUARED_PER_STEP);
}

/**
 * Whether validating `value` against `schema` fits in what is left of `budget.steps` (spent
 * either way). A dry run: no keyword is evaluated; every (subschema, value) pair ajv could visit
 * is counted — all branches of anyOf/oneOf/allOf, `if`, `then`, `else` and `not`, every `$ref`
 * followed (ajv may stop earlier, this never does), every pattern of patternProperties on every
 * key — plus the loops that grow with the schema or the value (enum values, required names,
 * pattern tests by string length, uniqueItems items). It stops as soon as the budget is spent, so
 * it costs at most what it allows.
 */
export function withinValidationBudget(schema: unknown, shape: { targets: ReadonlyMap<string, unknown>; quadratic: ReadonlySet<string> }, value: unknown, budget: { steps: number }): boolean {
  // Two parallel stacks (schema, value): no pair allocated per step.
  const nodes: unknown[] = [];
  const data: unknown[] = [];
  const visit = (node: unknown, item: unknown) => {
    budget.steps -= 1;
    nodes.push(node);
    data.push(item);
  };
  visit(schema, value);
  while (nodes.length > 0) {
    if (budget.steps < 0) return false;
    const node = nodes.pop();
    const item = data.pop();
    if (!isRecord(node)) continue;
    const { allOf, anyOf, oneOf, not, then, $ref } = node;
    if (Array.isArray(allOf)) for (const branch of allOf) visit(branch, item);
    if (Array.isArray(anyOf)) for (const branch of anyOf) visit(branch, item);
    if (Array.isArray(oneOf)) for (const branch of oneOf) visit(branch, item);
    if (not !== undefined) visit(not, item);
    if (node.if !== undefined) visit(node.if, item);
    if (then !== undefined) visit(then, item);
    if (node.else !== undefined) visit(node.else, item);
    if (typeof $ref === 'string') visit(shape.targets.get($ref), item);
    if (Array.isArray(node.enum)) budget.steps -= Math.floor(node.enum.length / ENUM_VALUES_PER_STEP);
    if (typeof item === 'string') {
      if (typeof node.pattern === 'string') budget.steps -= patternSteps(node.pattern, item, shape.quadratic);
    } else if (Array.isArray(item)) {
      const { items, additionalItems, contains } = node;
      if (items === undefined && contains === undefined && node.uniqueItems !== true) continue;
      if (budget.steps < item.length) return false;
      if (Array.isArray(items)) {
        for (let index = 0; index < item.length; index += 1) {
          if (index < items.length) visit(items[index], item[index]);
          else if (additionalItems !== undefined) visit(additionalItems, item[index]);
        }
      } else if (items !== undefined) for (const element of item) visit(items, element);
      if (contains !== undefined) for (const element of item) visit(contains, element);
      if (node.uniqueItems === true) budget.steps -= item.length;
    } else if (isRecord(item)) {
      const { properties, patternProperties, additionalProperties, propertyNames, required, dependencies } = node;
      if (Array.isArray(required)) budget.steps -= Math.floor(required.length / REQUIRED_NAMES_PER_STEP);
      if (isRecord(dependencies)) for (const dependency of Object.values(dependencies)) if (!Array.isArray(dependency)) visit(dependency, item);
      const named = isRecord(properties) ? properties : null;
      const patterned = isRecord(patternProperties) ? Object.entries(patternProperties) : null;
      if (named === null && patterned === null && additionalProperties === undefined && propertyNames === undefined) continue;
      if (patterned === null && additionalProperties === undefined && propertyNames === undefined) {
        // Only named properties: look each name up in the value (as ajv does), never walk its keys.
        const names = Object.keys(named!);
        budget.steps -= Math.floor(names.length / REQUIRED_NAMES_PER_STEP);
        for (const name of names) if (Object.hasOwn(item, name)) visit(named![name], item[name]);
        continue;
      }
      for (const key in item) {
        // Every key walked costs a step, so a node applied many times to a wide object spends the budget.
        budget.steps -= 1;
        if (budget.steps < 0) return false;
        if (named !== null && Object.hasOwn(named, key)) visit(named[key], item[key]);
        else if (additionalProperties !== undefined) visit(additionalProperties, item[key]);
        if (patterned !== null) {
          for (const [pattern, subschema] of patterned) {
            budget.steps -= patternSteps(pattern, key, shape.quadratic);
            visit(subschema, item[key]);
          }
        }
        if (propertyNames !== undefined) visit(propertyNames, key);
      }
    }
  }
  return budget.steps >= 0;
}

/** What a client reads in the 400 (the reason, limit and value are in its details). */
export function schemaRefusalMessage(refusal: SchemaRefusal): string {
  const { error, limit, actual } = refusal;
  const found = actual === undefined ? '' : ` (found ${actual})`;
  switch (error) {
    case 'schema_too_deep':
      return `it is nested more than ${limit} levels deep${found}`;
    case 'schema_too_large':
      return `its JSON is longer than ${limit} characters${found}`;
    case 'schema_too_complex':
      return `it is larger than ${limit} keywords (each JSON object and each of its members counts 1, an enum 2; title, description and $comment are free)${found}`;
    case 'schema_too_many_branches':
      return `an anyOf, oneOf or allOf has more than ${limit} branches${found}`;
    case 'schema_enum_too_large':
      return `an enum has more than ${limit} values${found}`;
    case 'schema_too_many_refs':
      return `it has more than ${limit} $ref${found}`;
    case 'schema_too_many_patterns':
      return `it has more than ${limit} patterns (pattern keywords and patternProperties keys)${found}`;
    case 'schema_too_many_pattern_checks':
      return `its patterns need more than ${limit} character-class comparisons together; use fewer patterns with several unbounded quantifiers`;
    case 'schema_ref_unsupported':
      return "a $ref must be a JSON pointer into the schema itself ('#' or '#/…'), and only the root may set a $id other than a '#' fragment";
    case 'schema_ref_recursive':
      return 'a $ref leads back to itself on the same value (no properties, items or other keyword moving to a child value in between), so validation would never end';
    case 'schema_ref_expansion_too_large':
      return `with every $ref replaced by its target it is larger than ${limit} keywords${found}`;
    case 'schema_compile_budget_spent':
      return `the schemas of this response together are larger than ${limit} keywords not compiled yet`;
    case 'schema_pattern_not_linear':
      return 'a pattern is refused: only bounded-time patterns are accepted (the rules of constraint.must_match)';
    default:
      return 'ajv cannot compile it';
  }
}
