import { createHash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/services.ts';
import { provenanceBatchDigest } from '../../src/verification/index.ts';
import { canonicalStatement, ROWS_PER_STATEMENT, type ProvenanceRecord } from '../../src/verification/provenance.ts';
import type { ProvenanceStatement } from '../../src/verification/index.ts';
import { createTestServices } from '../helpers/app.ts';
import { createTestOrg } from '../audit/database.ts';

let services: Services;

beforeAll(async () => {
  // A long window, so every record of a test lands in one batch.
  services = await createTestServices({ services: { verification: { provenance: { flushMs: 60_000 } } } });
});

afterAll(async () => {
  await services?.close();
});

function record(overrides: Partial<ProvenanceRecord> = {}): ProvenanceRecord {
  return {
    requestId: randomUUID(),
    contentHash: createHash('sha256').update(randomUUID()).digest('hex'),
    delivered: true,
    provider: 'openai',
    model: 'gpt-4o-mini',
    streamed: false,
    sources: [{ index: 0, id: 'doc-1', sha256: createHash('sha256').update('doc').digest('hex') }],
    checks: { integrity: 'pass', structural: 'pass' },
    passed: true,
    action: null,
    retriedFrom: null,
    riskClass: 'limited_risk',
    sb942ManifestPresent: false,
    ...overrides,
  };
}

async function read(orgId: string, requestIds: readonly string[]) {
  const provenance = services.verification.provenance;
  return Promise.all(requestIds.map(async (requestId) => (await provenance.get(orgId, requestId))!));
}

describe('provenance batches in the audit chain', () => {
  it('chains a batch of records with one audit entry whose digest covers every record of the batch', async () => {
    const orgId = await createTestOrg(services.db);
    const records = [record(), record({ passed: false, action: 'annotate' }), record({ delivered: false, passed: false, action: 'block' }), record({ streamed: true, sources: [] })];
    for (const each of records) services.verification.provenance.record(orgId, each);
    await services.verification.provenance.flush();

    const stored = await read(orgId, records.map((each) => each.requestId));
    const entries = (await services.audit.list(orgId)).filter((entry) => entry.action === 'ai.provenance.recorded');
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    for (const view of stored) expect(view.chain_of_custody).toEqual({ audit_seq: entry!.seq, audit_hash: entry!.hash, audit_action: 'ai.provenance.recorded' });
    expect(entry!.details).toEqual({ records: 4, records_sha256: provenanceBatchDigest(stored), delivered: 2, failed: 1, blocked: 1 });
    expect((await services.audit.verify(orgId)).ok).toBe(true);
  });

  it('gives another digest when any record of the batch is edited, left out or added', async () => {
    const orgId = await createTestOrg(services.db);
    const records = [record(), record(), record()];
    for (const each of records) services.verification.provenance.record(orgId, each);
    await services.verification.provenance.flush();
    const stored = await read(orgId, records.map((each) => each.requestId));
    const digest = provenanceBatchDigest(stored);

    expect(provenanceBatchDigest([...stored].reverse())).toBe(digest);
    expect(provenanceBatchDigest([{ ...stored[0]!, content_hash: '0'.repeat(64) }, stored[1]!, stored[2]!])).not.toBe(digest);
    expect(provenanceBatchDigest([stored[0]!, { ...stored[1]!, checks: { integrity: 'fail' } }, stored[2]!])).not.toBe(digest);
    expect(provenanceBatchDigest(stored.slice(0, 2))).not.toBe(digest);
    expect(provenanceBatchDigest([...stored, { ...stored[0]!, request_id: 'added' }])).not.toBe(digest);
  });

  it('keeps the first record of a request id written twice and leaves the repeat out of the later batch', async () => {
    const orgId = await createTestOrg(services.db);
    const first = record();
    services.verification.provenance.record(orgId, first);
    await services.verification.provenance.flush();
    const repeat = record({ requestId: first.requestId, model: 'gpt-4o' });
    const other = record();
    services.verification.provenance.record(orgId, repeat);
    services.verification.provenance.record(orgId, other);
    services.verification.provenance.record(orgId, { ...other, model: 'gpt-4o' });
    await services.verification.provenance.flush();

    const [kept, otherStored] = await read(orgId, [first.requestId, other.requestId]);
    expect(kept!.model).toBe('gpt-4o-mini');
    expect(otherStored!.model).toBe('gpt-4o-mini');
    const entries = (await services.audit.list(orgId)).filter((entry) => entry.action === 'ai.provenance.recorded');
    expect(entries).toHaveLength(2);
    const second = entries.find((entry) => entry.seq === otherStored!.chain_of_custody.audit_seq)!;
    expect(second.details).toMatchObject({ records: 1, records_sha256: provenanceBatchDigest([otherStored!]) });
    expect(second.target).toBe(other.requestId);
  });

  it('writes a batch larger than one statement under one audit entry, and leaves out an id already stored in its last statement', async () => {
    const orgId = await createTestOrg(services.db);
    const earlier = record();
    services.verification.provenance.record(orgId, earlier);
    await services.verification.provenance.flush();
    // Two and a half statements' worth; the already-stored id sits in the last one.
    const records = Array.from({ length: ROWS_PER_STATEMENT * 2 + ROWS_PER_STATEMENT / 2 }, () => record());
    records[records.length - 3] = record({ requestId: earlier.requestId, model: 'gpt-4o' });
    for (const each of records) services.verification.provenance.record(orgId, each);
    await services.verification.provenance.flush();

    const fresh = records.filter((each) => each.requestId !== earlier.requestId);
    const stored = await read(orgId, fresh.map((each) => each.requestId));
    expect(stored.every((view) => view !== null)).toBe(true);
    expect((await read(orgId, [earlier.requestId]))[0]!.model).toBe('gpt-4o-mini');
    const entries = (await services.audit.list(orgId)).filter((entry) => entry.action === 'ai.provenance.recorded');
    expect(entries).toHaveLength(2);
    const batch = entries.find((entry) => entry.seq === stored[0]!.chain_of_custody.audit_seq)!;
    for (const view of stored) expect(view.chain_of_custody.audit_seq).toBe(batch.seq);
    expect(batch.details).toMatchObject({ records: fresh.length, records_sha256: provenanceBatchDigest(stored) });
    expect((await services.audit.verify(orgId)).ok).toBe(true);
  });

  it('stores every other record of a full chunk whose first and middle statements meet ids already stored, under one audit entry, and the org stays confined after it', async () => {
    const orgId = await createTestOrg(services.db);
    const otherOrg = await createTestOrg(services.db);
    const earlier = [record(), record()];
    for (const each of earlier) services.verification.provenance.record(orgId, each);
    services.verification.provenance.record(otherOrg, record());
    await services.verification.provenance.flush();
    // The writer's whole chunk (500 records, five statements); a stored id in the first and in the third.
    const records = Array.from({ length: 500 }, () => record());
    records[0] = record({ requestId: earlier[0]!.requestId, model: 'gpt-4o' });
    records[ROWS_PER_STATEMENT * 2 + 7] = record({ requestId: earlier[1]!.requestId, model: 'gpt-4o' });
    for (const each of records) services.verification.provenance.record(orgId, each);
    await services.verification.provenance.flush();

    const fresh = records.filter((each) => !earlier.some((stored) => stored.requestId === each.requestId));
    const stored = await read(orgId, fresh.map((each) => each.requestId));
    expect(stored.filter((view) => view !== null)).toHaveLength(498);
    expect((await read(orgId, earlier.map((each) => each.requestId))).map((view) => view!.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini']);
    const entries = (await services.audit.list(orgId)).filter((entry) => entry.action === 'ai.provenance.recorded');
    expect(entries).toHaveLength(2);
    const batch = entries.find((entry) => entry.seq === stored[0]!.chain_of_custody.audit_seq)!;
    for (const view of stored) expect(view.chain_of_custody.audit_seq).toBe(batch.seq);
    expect(batch.details).toMatchObject({ records: 498, records_sha256: provenanceBatchDigest(stored) });
    expect((await services.audit.verify(orgId)).ok).toBe(true);
    // The evidence is written by the database's owner; the org's own reads stay under row-level security.
    const visible = await services.db.withOrg(orgId, (tx) => tx.query<{ orgs: number; records: number }>('SELECT (SELECT count(*)::int FROM orgs) AS orgs, (SELECT count(*)::int FROM ai_provenance) AS records'));
    expect(visible.rows[0]).toEqual({ orgs: 1, records: 500 });
  });

  it('hashes what is stored when a record carries a NUL character', async () => {
    const orgId = await createTestOrg(services.db);
    const each = record({ sources: [{ index: 0, id: 'doc\u00001', title: 'a\u0000b', sha256: '1'.repeat(64) }], riskClass: 'limited\u0000risk' });
    services.verification.provenance.record(orgId, each);
    await services.verification.provenance.flush();
    const [stored] = await read(orgId, [each.requestId]);
    expect(stored!.sources[0]!.id).toBe('doc\uFFFD1');
    const entry = (await services.audit.list(orgId)).find((candidate) => candidate.seq === stored!.chain_of_custody.audit_seq)!;
    expect(entry.details.records_sha256).toBe(provenanceBatchDigest([stored!]));
  });

  it('stores and reads back exactly the text that COPY treats specially (tabs, line breaks, backslashes, \\N) and hashes it', async () => {
    const orgId = await createTestOrg(services.db);
    const awkward = record({
      requestId: `req\t1\n\\N\r${randomUUID()}`,
      model: '\\N',
      action: 'a\\tb',
      retriedFrom: '',
      sources: [{ index: 0, title: 'line\none\ttab \\ "quoted" \u00e9\u{1F600}', sha256: '2'.repeat(64) }],
      riskClass: 'back\\slash',
    });
    const plain = record({ passed: null });
    for (const each of [awkward, plain]) services.verification.provenance.record(orgId, each);
    await services.verification.provenance.flush();
    const [stored, storedPlain] = await read(orgId, [awkward.requestId, plain.requestId]);
    expect(stored).toMatchObject({ request_id: awkward.requestId, model: '\\N', action: 'a\\tb', retried_from: '', sources: awkward.sources, risk_class: 'back\\slash' });
    expect(storedPlain).toMatchObject({ passed: null, action: null, retried_from: null });
    const entry = (await services.audit.list(orgId)).find((candidate) => candidate.seq === stored!.chain_of_custody.audit_seq)!;
    expect(entry.details.records_sha256).toBe(provenanceBatchDigest([stored!, storedPlain!]));
  });
});

describe('canonical form of a provenance record', () => {
  it('equals the RFC 8785 form the canonicalize library gives, for any record', () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('', '"', '\\', '\u2028', 'é', '😀', '</script>'));
    const statement = fc.record({
      request_id: text,
      content_hash: text,
      delivered: fc.boolean(),
      provider: text,
      model: text,
      streamed: fc.boolean(),
      sources: fc.array(fc.record({ index: fc.nat(), id: text, title: text, url: text, sha256: text }, { requiredKeys: ['index', 'sha256'] })),
      checks: fc.dictionary(fc.constantFrom('integrity', 'grounding', 'structural', 'constraint'), fc.constantFrom('pass', 'fail', 'skipped', 'error')),
      passed: fc.option(fc.boolean(), { nil: null }),
      action: fc.option(text, { nil: null }),
      retried_from: fc.option(text, { nil: null }),
      risk_class: text,
      sb942_manifest_present: fc.boolean(),
    });
    fc.assert(
      fc.property(statement, (each) => {
        expect(canonicalStatement(each as ProvenanceStatement)).toBe(canonicalize(each));
      }),
      { numRuns: 500 },
    );
  });
});
