import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.ts';
import type { DefinitionRecord } from './store.ts';

const ORG = 'org-1';
const SERVER = 'server-1';
const record = (overrides: Partial<DefinitionRecord>): DefinitionRecord => ({
  server_id: SERVER, kind: 'tool', name: 'add', hash: 'h1', pending_hash: null, pending_definition: null, pending_reason: null, findings: [], category: 'none',
  first_seen_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...overrides,
});

describe('the MCP memory store', () => {
  it('keeps a hold made here that the collector has not stored yet, and takes the collector’s approval of it', async () => {
    const store = createMemoryStore();
    await store.saveDefinition(ORG, record({ pending_hash: 'h2', pending_reason: 'changed' }));
    // The collector still has the approved h1 and nothing pending: the local hold stays.
    store.merge(ORG, SERVER, [record({})]);
    expect(store.definition(ORG, SERVER, 'tool', 'add')).toMatchObject({ hash: 'h1', pending_hash: 'h2' });
    // The collector approved h2: its record wins.
    store.merge(ORG, SERVER, [record({ hash: 'h2' })]);
    expect(store.definition(ORG, SERVER, 'tool', 'add')).toMatchObject({ hash: 'h2', pending_hash: null });
  });

  it('lists names that several servers of one org expose, and not another org’s', async () => {
    const store = createMemoryStore();
    await store.saveDefinition(ORG, record({ server_id: 'a' }));
    await store.saveDefinition(ORG, record({ server_id: 'b' }));
    await store.saveDefinition('org-2', record({ server_id: 'c' }));
    await store.saveDefinition(ORG, record({ server_id: 'a', kind: 'instructions', name: '' }));
    await store.saveDefinition(ORG, record({ server_id: 'b', kind: 'instructions', name: '' }));
    expect(await store.collisions(ORG)).toEqual([{ kind: 'tool', name: 'add', servers: ['a', 'b'] }]);
    store.dropServer(ORG, 'b');
    expect(await store.collisions(ORG)).toEqual([]);
  });

  it('holds quarantined answers by id', async () => {
    const store = createMemoryStore();
    const id = await store.quarantine(ORG, { server_id: SERVER, session_id: 's', method: 'tools/call', tool: 'get_notes', original: { content: [] }, findings: [] });
    expect(store.quarantined(id)).toMatchObject({ id, state: 'held', tool: 'get_notes' });
  });
});
