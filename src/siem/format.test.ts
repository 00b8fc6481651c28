import { describe, expect, it } from 'vitest';
import { cefMessage, hecEvent, octetFrame, syslogMessage, type SiemRecord } from './format.ts';
import { siemBackoff } from './siem.ts';

const finding: SiemRecord = {
  type: 'finding',
  record: {
    id: '0b0c0d0e-0000-4000-8000-000000000001',
    orgId: '0b0c0d0e-0000-4000-8000-00000000000a',
    occurredAt: new Date('2026-11-29T01:02:03.456Z'),
    requestId: 'req|1=2',
    pillar: 'api_security',
    kind: 'http',
    threatScore: 0.97,
    decision: 'block',
    patterns: [{ id: 'sqli.union', name: 'UNION | SELECT\nforged=1', confidence: 0.9 }],
    sessionId: null,
    gatewayId: 'gw',
    details: { source_ip: '203.0.113.9' },
  },
};

const audit: SiemRecord = {
  type: 'audit',
  record: {
    id: '0b0c0d0e-0000-4000-8000-000000000002',
    orgId: '0b0c0d0e-0000-4000-8000-00000000000a',
    seq: 42,
    occurredAt: new Date('2026-11-29T01:02:04.000Z'),
    actor: 'api_key:k"1]',
    action: 'webhook.create',
    target: 'line\nbreak',
    outcome: 'failure',
    details: {},
    hash: 'ab'.repeat(32),
  },
};

describe('CEF', () => {
  it('escapes pipes and backslashes in the header and equals signs and line breaks in values, so a finding cannot forge fields', () => {
    const text = cefMessage(finding, '1');
    expect(text.startsWith('CEF:0|svc|svc|1|finding:http|block api_security UNION \\| SELECT forged=1|10|')).toBe(true);
    expect(text).toContain('cs2=req|1\\=2');
    expect(text).not.toContain('\n');
    expect(text).toContain('src=203.0.113.9');
    expect(text).toContain(`externalId=${finding.record.id}`);
    // Extension keys appear once each: the forged "forged=1" stayed inside the escaped header.
    expect(text.split('|').slice(7).join('|').match(/(?:^| )forged=/g)).toBeNull();
  });

  it('gives audit entries their actor, outcome and chain position, and a higher severity when they failed', () => {
    const text = cefMessage(audit, '1');
    expect(text).toMatch(/^CEF:0\|svc\|svc\|1\|audit:webhook\.create\|audit webhook\.create\|7\|/);
    expect(text).toContain('suser=api_key:k"1]');
    expect(text).toContain('cs1=line\\nbreak');
    expect(text).toContain('cn1=42');
  });
});

describe('RFC 5424', () => {
  it('writes PRI from facility and decision, the record id in structured data, escaping ", \\ and ]', () => {
    const text = syslogMessage(audit, { format: 'json', facility: 13, hostname: 'svc host 1', version: '1' });
    expect(text).toMatch(/^<108>1 2026-11-29T01:02:04\.000Z svchost1 svc - audit \[svc@32473 id="[0-9a-f-]+" org="[0-9a-f-]+" type="audit"\] \{/);
    expect(JSON.parse(text.slice(text.indexOf('] {') + 2))).toMatchObject({ type: 'audit', seq: 42, target: 'line\nbreak' });
    expect(syslogMessage(finding, { format: 'cef', facility: 16, hostname: 'h', version: '1' })).toMatch(/^<130>1 /);
  });

  it('frames by octet count in bytes, not characters', () => {
    const frame = octetFrame('é€');
    expect(frame.toString('utf8')).toBe('5 é€');
  });
});

describe('HEC', () => {
  it('wraps the record with time in epoch seconds, source type per stream and the index when set', () => {
    expect(hecEvent(finding, { hostname: 'h', index: 'security' })).toMatchObject({ time: 1_795_914_123.456, sourcetype: 'svc:finding', index: 'security', event: { id: finding.record.id } });
    expect(hecEvent(audit, { hostname: 'h', index: null })).not.toHaveProperty('index');
  });
});

describe('retry backoff', () => {
  it('doubles from the base up to the cap, within ±10 %', () => {
    const policy = { baseDelayMs: 1_000, maxDelayMs: 300_000 };
    expect(siemBackoff(1, policy, () => 0.5)).toBe(1_000);
    expect(siemBackoff(4, policy, () => 0.5)).toBe(8_000);
    expect(siemBackoff(30, policy, () => 0.5)).toBe(300_000);
    expect(siemBackoff(1, policy, () => 0)).toBe(900);
    expect(siemBackoff(1, policy, () => 1)).toBe(1_100);
  });
});
