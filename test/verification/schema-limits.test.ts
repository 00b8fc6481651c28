/**
 * Limits on client JSON Schemas (src/verification/schema-limits.ts): each limit refused with its
 * reason, limit and value, before ajv compiles anything; the same refusal on the guard API's
 * `schema` and the policy's `structural.json_schema`; a realistic large schema accepted; ajv's
 * registry forgetting compiled schemas; and validation bounded by its step budget. Regression
 * tests of a fuzzing run whose 3,000-branch schema held the process for 37 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyError, resolvePolicy } from '../../src/verification/index.ts';
import { SCHEMA_LIMITS, VALIDATION_STEPS, withinValidationBudget } from '../../src/verification/schema-limits.ts';
import { compileSchema, structuralLayer, type StructuralPolicy } from '../../src/verification/structural.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

/** The fuzzing run's schema: 3,000 anyOf branches, about 330 KB. */
const fuzzSchema = () => ({ anyOf: Array.from({ length: 3_000 }, (_, i) => ({ type: 'object', required: [`k${i}x`], properties: { [`k${i}`]: { type: 'integer', minimum: 0 } } })) });

function nested(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let level = 1; level < levels; level += 1) schema = { type: 'object', properties: { next: schema } };
  return schema;
}

const properties = (count: number, make: (index: number) => unknown) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`field_${index}`, make(index)]));

/** Definitions whose refs double at each of `levels` levels: 2^levels paths from d0 to the last one. */
function refLattice(levels: number): Record<string, unknown> {
  const definitions: Record<string, unknown> = { [`d${levels}`]: { type: 'string' } };
  for (let level = levels - 1; level >= 0; level -= 1) definitions[`d${level}`] = { allOf: [{ $ref: `#/definitions/d${level + 1}` }, { $ref: `#/definitions/d${level + 1}` }] };
  return definitions;
}

/** An order-entry schema as large as real response schemas get: 300 properties, nested objects, an enum of 300 values, patterns and a shared definition. */
function realisticSchema(): Record<string, unknown> {
  const money = { type: 'object', required: ['amount', 'currency'], properties: { amount: { type: 'number', minimum: 0 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } }, additionalProperties: false };
  const line = { type: 'object', required: ['sku', 'quantity'], properties: { sku: { type: 'string', pattern: '^[A-Z]{2}-\\d{1,8}$' }, quantity: { type: 'integer', minimum: 1, maximum: 10_000 }, price: { $ref: '#/definitions/money' }, note: { type: 'string', maxLength: 500 } } };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://example.com/schemas/order.json',
    title: 'Order',
    definitions: { money },
    type: 'object',
    required: ['id', 'country', 'lines'],
    properties: {
      id: { type: 'string', description: 'Order identifier', minLength: 1, maxLength: 64 },
      country: { description: 'ISO 3166 country', enum: Array.from({ length: 300 }, (_, index) => `C${String(index).padStart(3, '0')}`) },
      lines: { type: 'array', minItems: 1, maxItems: 200, items: line },
      total: { $ref: '#/definitions/money' },
      shipping: { type: 'object', properties: { address: { type: 'object', properties: properties(12, () => ({ type: 'string', description: 'Address line', maxLength: 200 })) }, method: { enum: ['post', 'courier', 'pickup'] } } },
      tags: { type: 'array', uniqueItems: true, items: { type: 'string', maxLength: 40 } },
      ...properties(285, (index) => (index % 3 === 0 ? { type: 'integer', description: `Counter ${index}`, minimum: 0 } : { type: 'string', description: `Attribute ${index}`, maxLength: 200 })),
    },
    additionalProperties: false,
  };
}

const realisticAnswer = () => ({ id: 'o-1', country: 'C042', lines: [{ sku: 'AB-12', quantity: 2, price: { amount: 9.5, currency: 'EUR' } }], total: { amount: 19, currency: 'EUR' }, tags: ['a', 'b'], field_0: 3, field_1: 'x' });

describe('limits on a JSON Schema before ajv compiles it', () => {
  // The two pattern-scan tests below need classes no earlier scan has cached (regex-safety's overlap cache is per
  // process): one random base for both, so their code points (SCAN_BASE + 0…2 and SCAN_BASE + 20…22) can never meet, where
  // two independent bases met now and then and the second schema found one of its scans cached.
  const SCAN_BASE = 0x4e00 + Math.floor(Math.random() * 10_000);
  const refused = (schema: Record<string, unknown>) => {
    const outcome = compileSchema(schema);
    expect(outcome).toHaveProperty('error');
    return outcome;
  };

  it('refuses the fuzzing run’s 3,000-branch schema as too complex, before compiling it', () => {
    expect(refused(fuzzSchema())).toEqual({ error: 'schema_too_complex', limit: SCHEMA_LIMITS.complexity });
  });

  it('refuses a schema nested deeper than the limit, and one nested 10,000 deep without overflowing the stack', () => {
    // Two levels of JSON a level of schema (the object and its properties map).
    expect(compileSchema(nested(SCHEMA_LIMITS.depth / 2))).not.toHaveProperty('error');
    expect(refused(nested(SCHEMA_LIMITS.depth / 2 + 1))).toEqual({ error: 'schema_too_deep', limit: SCHEMA_LIMITS.depth });
    expect(() => compileSchema(nested(10_000))).not.toThrow();
    expect(refused(nested(10_000))).toMatchObject({ error: 'schema_too_deep' });
    expect(refused(nested(100_000))).toMatchObject({ error: 'schema_too_deep' });
  });

  it('refuses JSON text longer than the limit, naming its length', () => {
    const schema = { type: 'string', description: 'd'.repeat(SCHEMA_LIMITS.chars) };
    expect(refused(schema)).toEqual({ error: 'schema_too_large', limit: SCHEMA_LIMITS.chars, actual: JSON.stringify(schema).length });
    expect(refused({ type: 'array', examples: [Array.from({ length: SCHEMA_LIMITS.chars + 1 }, () => 0)] })).toEqual({ error: 'schema_too_large', limit: SCHEMA_LIMITS.chars });
  });

  it('counts complexity as JSON objects and their members, annotations free', () => {
    // 3 a property (the object, its type, its name in properties) + the root's 2 members + the root and the properties map.
    const fits = Math.floor((SCHEMA_LIMITS.complexity - 4) / 3);
    expect(compileSchema({ type: 'object', properties: properties(fits, () => ({ type: 'string', description: 'free' })) })).not.toHaveProperty('error');
    expect(refused({ type: 'object', properties: properties(fits + 1, () => ({ type: 'string' })) })).toEqual({ error: 'schema_too_complex', limit: SCHEMA_LIMITS.complexity });
  });

  it('refuses an anyOf, oneOf or allOf with more branches than the limit', () => {
    for (const keyword of ['anyOf', 'oneOf', 'allOf']) {
      expect(refused({ [keyword]: Array.from({ length: SCHEMA_LIMITS.branches + 1 }, () => ({})) })).toEqual({ error: 'schema_too_many_branches', limit: SCHEMA_LIMITS.branches, actual: SCHEMA_LIMITS.branches + 1 });
    }
    expect(compileSchema({ anyOf: Array.from({ length: SCHEMA_LIMITS.branches }, (_, i) => ({ const: i })) })).not.toHaveProperty('error');
  });

  it('refuses an enum with more values than the limit', () => {
    expect(refused({ enum: Array.from({ length: SCHEMA_LIMITS.enumValues + 1 }, (_, i) => `v${i}`) })).toEqual({ error: 'schema_enum_too_large', limit: SCHEMA_LIMITS.enumValues, actual: SCHEMA_LIMITS.enumValues + 1 });
  });

  it('refuses more $ref members than the limit', () => {
    const schema = { definitions: { leaf: { type: 'string' } }, type: 'object', properties: properties(SCHEMA_LIMITS.refs + 1, () => ({ $ref: '#/definitions/leaf' })) };
    expect(refused(schema)).toEqual({ error: 'schema_too_many_refs', limit: SCHEMA_LIMITS.refs, actual: SCHEMA_LIMITS.refs + 1 });
  });

  it('refuses more patterns than the limit, patternProperties keys included', () => {
    const count = SCHEMA_LIMITS.patterns + 1;
    expect(refused({ type: 'object', properties: properties(count, (i) => ({ pattern: `^a${i}$` })) })).toEqual({ error: 'schema_too_many_patterns', limit: SCHEMA_LIMITS.patterns, actual: count });
    expect(refused({ type: 'object', patternProperties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`^p${i}_`, {}])) })).toMatchObject({ error: 'schema_too_many_patterns', actual: count });
  });

  it('refuses patterns that together need more class-against-class scans than the schema’s budget', () => {
    // Each needs one uncached scan: classes of code points no other test uses.
    const patterns = Array.from({ length: SCHEMA_LIMITS.patternScans + 1 }, (_, i) => `[^${String.fromCodePoint(SCAN_BASE + i)}]+[${String.fromCodePoint(SCAN_BASE + i)}]+`);
    expect(refused({ type: 'object', properties: properties(patterns.length, (i) => ({ type: 'string', pattern: patterns[i] })) })).toEqual({ error: 'schema_too_many_pattern_checks', limit: SCHEMA_LIMITS.patternScans });
  });

  it('does not keep a refusal for want of pattern scans: once the scans are done the same schema compiles', () => {
    const patterns = Array.from({ length: SCHEMA_LIMITS.patternScans + 1 }, (_, i) => `[^${String.fromCodePoint(SCAN_BASE + 20 + i)}]+[${String.fromCodePoint(SCAN_BASE + 20 + i)}]+`);
    const schema = { type: 'object', properties: properties(patterns.length, (i) => ({ type: 'string', pattern: patterns[i] })) };
    expect(refused(schema)).toEqual({ error: 'schema_too_many_pattern_checks', limit: SCHEMA_LIMITS.patternScans });
    for (const pattern of patterns) expect(compileSchema({ type: 'string', pattern })).not.toHaveProperty('error');
    expect(compileSchema(schema)).not.toHaveProperty('error');
  });

  it('refuses a $ref that is not a JSON pointer into the schema, and a nested $id', () => {
    expect(refused({ $ref: 'https://example.com/other.json' })).toEqual({ error: 'schema_ref_unsupported' });
    expect(refused({ definitions: { a: { $id: '#a', type: 'string' } }, $ref: '#a' })).toEqual({ error: 'schema_ref_unsupported' });
    expect(refused({ properties: { a: { $id: 'https://example.com/a', type: 'string' } } })).toEqual({ error: 'schema_ref_unsupported' });
    expect(refused({ $ref: '#/definitions/missing' })).toEqual({ error: 'schema_invalid' });
  });

  it('refuses a recursive ref that stays on the same value, in place or through definitions', () => {
    expect(refused({ anyOf: [{ $ref: '#' }, { type: 'string' }] })).toEqual({ error: 'schema_ref_recursive' });
    expect(refused({ definitions: { a: { allOf: [{ $ref: '#/definitions/b' }] }, b: { not: { $ref: '#/definitions/a' } } }, $ref: '#/definitions/a' })).toEqual({ error: 'schema_ref_recursive' });
    // A definition named like a descending keyword does not descend.
    expect(refused({ definitions: { items: { anyOf: [{ $ref: '#/definitions/items' }] } }, $ref: '#/definitions/items' })).toEqual({ error: 'schema_ref_recursive' });
  });

  it('accepts a recursive tree schema and validates nested trees with it', () => {
    const tree = { definitions: { node: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/definitions/node' } } } } }, $ref: '#/definitions/node' };
    const compiled = compileSchema(tree);
    if ('error' in compiled) throw new Error(compiled.error);
    expect(compiled.validate({ name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }, { name: 'd', children: [] }] })).toBe(true);
    expect(compiled.validate({ name: 'a', children: [{ name: 'b', children: [{ children: [] }] }] })).toBe(false);
    const selfRoot = compileSchema({ type: 'object', properties: { value: { type: 'integer' }, next: { $ref: '#' } }, additionalProperties: false });
    if ('error' in selfRoot) throw new Error(selfRoot.error);
    expect(selfRoot.validate({ value: 1, next: { value: 2, next: { value: 3 } } })).toBe(true);
    expect(selfRoot.validate({ value: 1, next: { value: 'two' } })).toBe(false);
  });

  it('validates a recursive tree through the layer within the step budget', () => {
    const tree = { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } }, name: { type: 'string' } } };
    const policy: StructuralPolicy = { require_json: false, json_schema: null, check_code_fences: false, check_tool_arguments: false };
    let value: Record<string, unknown> = { name: 'leaf' };
    for (let level = 0; level < 50; level += 1) value = { name: `n${level}`, children: [value, { name: 'x' }] };
    expect(structuralLayer({ content: JSON.stringify(value), finishReason: 'stop', schema: tree }, policy)).toMatchObject({ verdict: 'pass', findings: [] });
    const wrong = { name: 'root', children: [{ name: 'a', children: [{ name: 7 }] }] };
    expect(structuralLayer({ content: JSON.stringify(wrong), finishReason: 'stop', schema: tree }, policy).findings.map((finding) => finding.reason)).toEqual(['schema_violation']);
  });

  it('refuses refs that expand beyond the limit once replaced by their targets', () => {
    expect(refused({ definitions: refLattice(30), $ref: '#/definitions/d0' })).toMatchObject({ error: 'schema_ref_expansion_too_large', limit: SCHEMA_LIMITS.expandedComplexity });
    expect(compileSchema({ definitions: refLattice(8), $ref: '#/definitions/d0' })).not.toHaveProperty('error');
  });

  it('accepts a realistic large schema and validates with it', () => {
    const compiled = compileSchema(realisticSchema());
    if ('error' in compiled) throw new Error(`refused: ${compiled.error}`);
    expect(compiled.validate(realisticAnswer())).toBe(true);
    expect(compiled.validate({ ...realisticAnswer(), country: 'XX' })).toBe(false);
    expect(compiled.validate.errors?.[0]).toMatchObject({ instancePath: '/country', keyword: 'enum' });
  });

  it('compiles two different schemas with the same $id (ajv forgets each once compiled)', () => {
    const first = compileSchema({ $id: 'https://example.com/shared.json', type: 'object', required: ['a'] });
    const second = compileSchema({ $id: 'https://example.com/shared.json', type: 'object', required: ['b'] });
    if ('error' in first || 'error' in second) throw new Error('refused');
    expect([first.validate({ a: 1 }), second.validate({ a: 1 })]).toEqual([true, false]);
  });

  it('tells duplicates in uniqueItems apart by value, whatever the order of members', () => {
    const compiled = compileSchema({ type: 'array', uniqueItems: true });
    if ('error' in compiled) throw new Error(compiled.error);
    expect(compiled.validate([{ a: 1, b: [2] }, { b: [2], a: 1 }])).toBe(false);
    expect(compiled.validate([1, '1', [1], { a: 1 }, null])).toBe(true);
    expect(compiled.validate(Array.from({ length: 20_000 }, (_, i) => ({ id: i })))).toBe(true);
  });

  it('checks uniqueItems on strings with a lone surrogate instead of erroring', () => {
    const compiled = compileSchema({ type: 'array', uniqueItems: true });
    if ('error' in compiled) throw new Error(compiled.error);
    expect(compiled.validate(['\ud83d', 'x'])).toBe(true);
    expect(compiled.validate(['\ud83d', 'x', '\ud83d'])).toBe(false);
    expect(compiled.validate([{ a: '\udc00', b: 1 }, { b: 1, a: '\udc00' }])).toBe(false);
    const policy: StructuralPolicy = { require_json: false, json_schema: null, check_code_fences: false, check_tool_arguments: false };
    expect(structuralLayer({ content: '["\\ud83d","x"]', finishReason: 'stop', schema: { type: 'array', uniqueItems: true } }, policy)).toMatchObject({ verdict: 'pass', findings: [] });
  });

  it('refuses the same limits in a policy’s structural.json_schema, with the limit in the details', () => {
    let thrown: unknown;
    try {
      resolvePolicy({ structural: { json_schema: { anyOf: Array.from({ length: SCHEMA_LIMITS.branches + 1 }, () => ({})) } } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PolicyError);
    expect(thrown).toMatchObject({ field: 'body.structural.json_schema', reason: 'schema_too_many_branches', details: { limit: SCHEMA_LIMITS.branches, actual: SCHEMA_LIMITS.branches + 1 } });
    expect(() => resolvePolicy({ structural: { json_schema: nested(10_000) } })).toThrow(PolicyError);
    expect(resolvePolicy({ structural: { json_schema: fuzzSchema() } }, { refusedRules: 'skip' }).compiled.inactive).toEqual([{ layer: 'structural', rule: 'structural.json_schema', inactive_reason: 'schema_too_complex' }]);
  });
});

describe('the validation budget', () => {
  const policy: StructuralPolicy = { require_json: false, json_schema: null, check_code_fences: false, check_tool_arguments: false };
  const branches = { type: 'array', items: { oneOf: [...Array.from({ length: SCHEMA_LIMITS.branches - 1 }, (_, i) => ({ type: 'object', required: [`k${i}`] })), {}] } };

  it('fails a response whose validation would take more steps than the budget, without validating it', () => {
    const content = JSON.stringify(Array.from({ length: Math.ceil(VALIDATION_STEPS / SCHEMA_LIMITS.branches) + 1_000 }, () => ({})));
    const result = structuralLayer({ content, finishReason: 'stop', schema: branches }, policy);
    expect(result.verdict).toBe('fail');
    expect(result.findings.map((finding) => finding.reason)).toEqual(['schema_validation_too_costly']);
  });

  it('validates the same schema on a response within the budget', () => {
    const content = JSON.stringify(Array.from({ length: 1_000 }, () => ({})));
    expect(structuralLayer({ content, finishReason: 'stop', schema: branches }, policy)).toMatchObject({ verdict: 'pass', findings: [] });
  });

  it('does not walk every key of a wide object for each application of a properties-only node', () => {
    const schema = { $defs: { p: { properties: { a: {} } }, q: { allOf: Array.from({ length: 64 }, () => ({ $ref: '#/$defs/p' })) } }, allOf: Array.from({ length: 20 }, () => ({ $ref: '#/$defs/q' })) };
    const content = JSON.stringify(Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i])));
    const result = structuralLayer({ content, finishReason: 'stop', schema }, policy);
    expect(['pass', 'fail']).toContain(result.verdict);
    expect(result.findings.every((finding) => finding.reason === 'schema_validation_too_costly')).toBe(true);
    const steps = { steps: VALIDATION_STEPS };
    const compiled = compileSchema(schema);
    if ('error' in compiled) throw new Error(compiled.error);
    // Counts each walk of the object's keys: the properties-only node must look `a` up instead.
    let walks = 0;
    const watched = new Proxy(JSON.parse(content) as Record<string, unknown>, {
      ownKeys: (target) => {
        walks += 1;
        return Reflect.ownKeys(target);
      },
    });
    expect(withinValidationBudget(compiled.schema, compiled, watched, steps)).toBe(true);
    expect(walks).toBe(0);
    // About one step per (subschema, value) pair: 20 × 65 applications and one lookup of `a` each.
    expect(VALIDATION_STEPS - steps.steps).toBeLessThan(5_000);
  });

  it('charges a step per key when a node walks an object’s keys, so the budget stops it', () => {
    const schema = { $defs: { p: { additionalProperties: {} } }, allOf: Array.from({ length: 64 }, () => ({ $ref: '#/$defs/p' })) };
    const value = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i]));
    const compiled = compileSchema(schema);
    if ('error' in compiled) throw new Error(compiled.error);
    expect(withinValidationBudget(compiled.schema, compiled, value, { steps: VALIDATION_STEPS })).toBe(false);
  });

  it('counts a lattice of refs at its expanded size for every value', () => {
    const schema = { type: 'array', definitions: refLattice(8), items: { $ref: '#/definitions/d0' } };
    const within = structuralLayer({ content: JSON.stringify(['x']), finishReason: 'stop', schema }, policy);
    expect(within.verdict).toBe('pass');
    const beyond = structuralLayer({ content: JSON.stringify(Array.from({ length: 2_000 }, () => 'x')), finishReason: 'stop', schema }, policy);
    expect(beyond.findings.map((finding) => finding.reason)).toEqual(['schema_validation_too_costly']);
  });
});

describe('limits through the API', () => {
  let context: TestContext;
  let headers: Record<string, string>;

  beforeAll(async () => {
    context = await createTestApp();
    const { apiKey } = await context.createOrg();
    headers = { authorization: `Bearer ${apiKey}` };
  });

  afterAll(async () => {
    await context?.close();
  });

  it('answers the fuzzing run’s schema with 400 VALIDATION_FAILED naming body.schema and the limit', async () => {
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '{"a":1}', schema: fuzzSchema() } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.schema', reason: 'schema_too_complex', limit: SCHEMA_LIMITS.complexity });
  });

  it('answers a schema over one limit with its reason, limit and value', async () => {
    const schema = { enum: Array.from({ length: SCHEMA_LIMITS.enumValues + 1 }, (_, i) => i) };
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '1', schema } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.schema', reason: 'schema_enum_too_large', limit: SCHEMA_LIMITS.enumValues, actual: SCHEMA_LIMITS.enumValues + 1 });
  });

  it('answers a schema deeper than the limit with 400 naming body.schema and the limit', async () => {
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '{}', schema: nested(50) } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.schema', reason: 'schema_too_deep', limit: SCHEMA_LIMITS.depth });
  });

  it('answers a schema nested 10,000 deep with 400, not 500 (the body parser refuses it first)', async () => {
    // Written as text: JSON.stringify itself overflows the stack on such an object.
    const schema = '{"type":"object","properties":{"next":'.repeat(9_999) + '{"type":"string"}' + '}}'.repeat(9_999);
    const payload = `{"response":"{}","schema":${schema}}`;
    const response = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers: { ...headers, 'content-type': 'application/json' }, payload });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('refuses the fuzzing run’s schema on PUT /api/v1/config/verification with the same reason and limit', async () => {
    const response = await context.app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { structural: { json_schema: fuzzSchema() } } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.structural.json_schema', reason: 'schema_too_complex', limit: SCHEMA_LIMITS.complexity });
  });

  it('saves a realistic large schema in the policy and checks responses with it', async () => {
    const { apiKey } = await context.createOrg();
    const orgHeaders = { authorization: `Bearer ${apiKey}` };
    const saved = await context.app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers: orgHeaders, payload: { structural: { json_schema: realisticSchema() } } });
    expect(saved.statusCode).toBe(200);
    const passed = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers: orgHeaders, payload: { response: JSON.stringify(realisticAnswer()) } });
    expect(passed.json().layers.structural).toMatchObject({ verdict: 'pass', info: { checks: ['json', 'json_schema', 'code_fences'] } });
    const failed = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers: orgHeaders, payload: { response: JSON.stringify({ ...realisticAnswer(), lines: [] }) } });
    expect(failed.json().layers.structural.findings).toEqual([expect.objectContaining({ reason: 'schema_violation', detail: '/lines minItems' })]);
  });
});
