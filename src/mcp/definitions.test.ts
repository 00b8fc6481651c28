import { describe, expect, it } from 'vitest';
import { roleAllows, roleOf, MCP_ROLES } from './authorization.ts';
import { cleanDeep, cleanText, definitionHash, inferCategory, TOOL_CATEGORIES } from './definitions.ts';

const tool = {
  name: 'add',
  title: 'Add',
  description: 'Adds two numbers.',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } } },
  annotations: { readOnlyHint: true },
  _meta: { version: 1 },
};

describe('definition hash', () => {
  it('is the same for the same definition whatever the key order', () => {
    const reordered = { _meta: { version: 1 }, annotations: { readOnlyHint: true }, outputSchema: tool.outputSchema, inputSchema: { properties: tool.inputSchema.properties, type: 'object' }, description: tool.description, title: 'Add', name: 'add' };
    expect(definitionHash(reordered)).toBe(definitionHash(tool));
  });

  it.each([
    ['name', { name: 'add2' }],
    ['title', { title: 'Add!' }],
    ['description', { description: 'Adds two numbers. Then reads ~/.ssh/id_rsa.' }],
    ['inputSchema', { inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' }, note: { type: 'string' } } } }],
    ['outputSchema', { outputSchema: { type: 'object' } }],
    ['annotations', { annotations: { readOnlyHint: false } }],
    ['_meta', { _meta: { version: 2 } }],
  ])('changes when %s changes', (_field, change) => {
    expect(definitionHash({ ...tool, ...change })).not.toBe(definitionHash(tool));
  });

  it('ignores fields outside the definition (such as execution hints svc does not show)', () => {
    expect(definitionHash({ ...tool, icons: [] })).toBe(definitionHash(tool));
  });

  it('hashes a name with a lone surrogate (a hostile server\'s) as U+FFFD instead of failing', () => {
    expect(definitionHash({ ...tool, name: 'add\ud800' })).toBe(definitionHash({ ...tool, name: 'add\uFFFD' }));
  });
});

describe('cleaning', () => {
  it('strips ANSI escapes, bidi controls, zero-width and tag characters and counts them', () => {
    const { text, removed } = cleanText('safe\u001b[31m red\u001b[0m\u202eevil\u200b\u{e0041}');
    expect(text).toBe('safe redevil');
    expect(removed).toMatchObject({ ansi: 2, bidi: 1, zeroWidth: 1, tags: 1 });
  });

  it('returns plain text untouched and the same object when nothing changes', () => {
    const value = { tools: [{ name: 'a', description: 'plain' }] };
    expect(cleanText('plain ünïcode 漢字 emoji 🙂').removed).toBeNull();
    expect(cleanDeep(value)).toBe(value);
  });
});

describe('tool categories', () => {
  it.each([
    ['read_text_file', 'read_files'],
    ['list_directory', 'read_files'],
    ['write_file', 'write_files'],
    ['edit_file', 'write_files'],
    ['move_file', 'write_files'],
    ['create_directory', 'write_files'],
    ['run_command', 'execute_code'],
    ['execute_python', 'execute_code'],
    ['fetch_url', 'network_access'],
    ['get-env', 'system_calls'],
    ['echo', 'none'],
    ['get-sum', 'none'],
  ])('infers %s as %s', (name, category) => {
    expect(inferCategory({ name, inputSchema: { type: 'object', properties: {} } })).toBe(category);
  });

  it('reads parameters: a url parameter means network access, a path parameter file access', () => {
    expect(inferCategory({ name: 'preview', inputSchema: { type: 'object', properties: { url: { type: 'string' } } } })).toBe('network_access');
    expect(inferCategory({ name: 'summarize', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } })).toBe('read_files');
  });

  it('never puts a readOnlyHint tool in write_files', () => {
    expect(inferCategory({ name: 'update_file_index', annotations: { readOnlyHint: true } })).toBe('read_files');
  });

  it.each([
    // server-everything 2026.8.31 (annotations as it lists them): ordinary for an admin.
    ['get-env', { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }, {}, 'none'],
    ['trigger-sampling-request', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }, { prompt: {}, maxTokens: {} }, 'none'],
    ['trigger-elicitation-request', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }, {}, 'none'],
    ['trigger-url-elicitation', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }, { url: {}, message: {} }, 'none'],
    ['gzip-file-as-resource', { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true }, { name: {}, data: {} }, 'read_files'],
    // server-filesystem 2026.8.31.
    ['read_text_file', { readOnlyHint: true, openWorldHint: false }, { path: {} }, 'read_files'],
    ['create_directory', { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }, { path: {} }, 'write_files'],
    ['move_file', { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false }, { source: {}, destination: {} }, 'write_files'],
    // Annotated tools that do reach the network or run code keep those categories.
    ['fetch_page', { readOnlyHint: true, openWorldHint: true }, { url: {} }, 'network_access'],
    ['send_message', { readOnlyHint: false, destructiveHint: false, openWorldHint: true }, { to: {}, text: {} }, 'network_access'],
    ['evaluate', { readOnlyHint: false, destructiveHint: false, openWorldHint: false }, { expression: {} }, 'execute_code'],
    ['kill_process', { readOnlyHint: false, destructiveHint: true }, { pid: {} }, 'system_calls'],
  ])('derives %s from its annotations and schema before its name', (name, annotations, properties, category) => {
    expect(inferCategory({ name, annotations, inputSchema: { type: 'object', properties } })).toBe(category);
  });

  it('lets configuration override the inference', () => {
    expect(inferCategory({ name: 'echo' }, 'system_calls')).toBe('system_calls');
    expect(TOOL_CATEGORIES).toContain('none');
  });
});

describe('tool authorization by role (the spec table)', () => {
  const table: Record<string, Record<string, boolean>> = {
    read_files: { viewer: true, operator: true, admin: true, super_admin: true },
    write_files: { viewer: false, operator: true, admin: true, super_admin: true },
    execute_code: { viewer: false, operator: false, admin: true, super_admin: true },
    network_access: { viewer: false, operator: false, admin: false, super_admin: true },
    system_calls: { viewer: false, operator: false, admin: false, super_admin: true },
  };
  for (const [category, row] of Object.entries(table)) {
    for (const role of MCP_ROLES) {
      it(`${row[role] ? 'allows' : 'denies'} ${role} a ${category} tool`, () => {
        expect(roleAllows(role, category as never)).toBe(row[role]);
      });
    }
  }

  it('maps key scopes to roles and lists super_admin keys from configuration', () => {
    const key = (scope: 'read' | 'write' | 'admin', keyId = 'k1') => ({ kind: 'api_key' as const, scope, role: null, keyId });
    expect(roleOf(key('read'), new Set())).toBe('viewer');
    expect(roleOf(key('write'), new Set())).toBe('operator');
    expect(roleOf(key('admin'), new Set())).toBe('admin');
    expect(roleOf(key('read', 'boss'), new Set(['boss']))).toBe('super_admin');
    expect(roleOf({ kind: 'user', scope: 'admin', role: 'super_admin', keyId: null }, new Set())).toBe('super_admin');
  });
});
