/**
 * What a SIEM receives, as pure functions: a finding (threat event) or an audit entry rendered as
 * an RFC 5424 syslog message (MSG in CEF or JSON) framed for TCP and TLS by octet counting
 * (RFC 6587 3.4.1, RFC 5425 4.3), or as a Splunk HTTP Event Collector event.
 *
 * Every message carries the record's own id (syslog structured data `id`, CEF `externalId`, JSON
 * and HEC `id`): the same finding delivered again after a crash between send and acknowledgement
 * (docs/siem.md) has the same id, so a SIEM can de-duplicate on it.
 *
 * RFC 5424 framing is small and fixed, so it is written here rather than taken from a package:
 * the syslog clients on npm each own their socket (no connect-time SSRF guard, no way to learn
 * that a batch was read) and frame with newlines, not octet counts (docs/decisions.md).
 */

export interface FindingRecord {
  id: string;
  orgId: string;
  occurredAt: Date;
  requestId: string;
  pillar: string;
  kind: string;
  threatScore: number;
  decision: string;
  patterns: readonly { id: string; name?: string; confidence?: number }[];
  sessionId: string | null;
  gatewayId: string | null;
  details: Record<string, unknown>;
}

export interface AuditRecordView {
  id: string;
  orgId: string;
  seq: number;
  occurredAt: Date;
  actor: string;
  action: string;
  target: string | null;
  outcome: string;
  details: Record<string, unknown>;
  hash: string;
}

export type SiemRecord = { type: 'finding'; record: FindingRecord } | { type: 'audit'; record: AuditRecordView };

export interface SyslogOptions {
  format: 'cef' | 'json';
  /** Syslog facility, 0 to 23 (default 13, log audit). */
  facility: number;
  /** HOSTNAME field (printable ASCII, at most 255). */
  hostname: string;
  /** Version reported in CEF's header. */
  version: string;
}

/** Private enterprise number 32473 (RFC 5612: reserved for documentation and examples) names svc's SD-ID. */
export const SD_ID = 'svc@32473';

/** Syslog severity of a finding by decision, of an audit entry by outcome. */
export function syslogSeverity(item: SiemRecord): number {
  if (item.type === 'audit') return item.record.outcome === 'success' ? 6 : 4;
  switch (item.record.decision) {
    case 'block':
      return 2; // critical
    case 'challenge':
      return 3; // error
    case 'alert':
      return 4; // warning
    default:
      return 5; // notice
  }
}

/** CEF severity (0 to 10) of a finding: its threat score on the 0–10 scale; audit entries 3, or 7 when they failed. */
export function cefSeverity(item: SiemRecord): number {
  if (item.type === 'audit') return item.record.outcome === 'success' ? 3 : 7;
  const score = Number.isFinite(item.record.threatScore) ? item.record.threatScore : 0;
  return Math.max(0, Math.min(10, Math.round(score <= 1 ? score * 10 : score / 10)));
}

/** The record as one JSON object (the JSON format's MSG and the HEC event). */
export function recordJson(item: SiemRecord): Record<string, unknown> {
  if (item.type === 'finding') {
    const finding = item.record;
    return {
      type: 'finding',
      id: finding.id,
      org_id: finding.orgId,
      occurred_at: finding.occurredAt.toISOString(),
      request_id: finding.requestId,
      pillar: finding.pillar,
      kind: finding.kind,
      threat_score: finding.threatScore,
      decision: finding.decision,
      pattern_ids: finding.patterns.map((pattern) => pattern.id),
      patterns: finding.patterns,
      session_id: finding.sessionId,
      gateway_id: finding.gatewayId,
      details: finding.details,
    };
  }
  const entry = item.record;
  return {
    type: 'audit',
    id: entry.id,
    org_id: entry.orgId,
    seq: entry.seq,
    occurred_at: entry.occurredAt.toISOString(),
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    outcome: entry.outcome,
    details: entry.details,
    hash: entry.hash,
  };
}

const escapeCefHeader = (value: string) => value.replace(/[\\|]/g, (match) => `\\${match}`).replace(/[\r\n]+/g, ' ');
const escapeCefValue = (value: string) =>
  value.replace(/[\\=\r\n]/g, (match) => (match === '\n' ? '\\n' : match === '\r' ? '\\r' : `\\${match}`));

/** CEF:0 text of a record (ArcSight CEF rev. 25: header escaping of `\` and `|`, extension escaping of `\`, `=` and line ends). */
export function cefMessage(item: SiemRecord, version: string): string {
  const extension: Array<[string, string | number | null]> = [];
  let signature: string;
  let name: string;
  if (item.type === 'finding') {
    const finding = item.record;
    signature = `finding:${finding.kind}`;
    const first = finding.patterns[0];
    name = `${finding.decision} ${finding.pillar} ${first?.name ?? first?.id ?? finding.kind}`;
    const source = typeof finding.details.source_ip === 'string' ? finding.details.source_ip : null;
    extension.push(
      ['rt', finding.occurredAt.getTime()],
      ['externalId', finding.id],
      ['act', finding.decision],
      ['cat', finding.pillar],
      ['src', source],
      ['cn1Label', 'threatScore'],
      ['cn1', finding.threatScore],
      ['cs1Label', 'patternIds'],
      ['cs1', finding.patterns.map((pattern) => pattern.id).join(',')],
      ['cs2Label', 'requestId'],
      ['cs2', finding.requestId],
      ['cs3Label', 'sessionId'],
      ['cs3', finding.sessionId],
      ['cs4Label', 'gatewayId'],
      ['cs4', finding.gatewayId],
      ['cs5Label', 'orgId'],
      ['cs5', finding.orgId],
    );
  } else {
    const entry = item.record;
    signature = `audit:${entry.action}`;
    name = `audit ${entry.action}`;
    extension.push(
      ['rt', entry.occurredAt.getTime()],
      ['externalId', entry.id],
      ['act', entry.action],
      ['cat', 'audit'],
      ['suser', entry.actor],
      ['outcome', entry.outcome],
      ['cs1Label', 'target'],
      ['cs1', entry.target],
      ['cn1Label', 'seq'],
      ['cn1', entry.seq],
      ['cs2Label', 'hash'],
      ['cs2', entry.hash],
      ['cs5Label', 'orgId'],
      ['cs5', entry.orgId],
    );
  }
  const header = ['CEF:0', 'svc', 'svc', version, signature, name, String(cefSeverity(item))].map((field, index) => (index === 0 ? field : escapeCefHeader(field)));
  const pairs = extension.filter(([, value]) => value !== null && value !== '').map(([key, value]) => `${key}=${escapeCefValue(String(value))}`);
  return `${header.join('|')}|${pairs.join(' ')}`;
}

const escapeParam = (value: string) => value.replace(/["\\\]]/g, (match) => `\\${match}`);
/** PRINTUSASCII without spaces, cut to `max` (RFC 5424 header fields); '-' when empty. */
const headerField = (value: string, max: number) => value.replace(/[^\x21-\x7e]/g, '').slice(0, max) || '-';

/** One RFC 5424 message (without framing). */
export function syslogMessage(item: SiemRecord, options: SyslogOptions): string {
  const facility = Number.isInteger(options.facility) && options.facility >= 0 && options.facility <= 23 ? options.facility : 13;
  const priority = facility * 8 + syslogSeverity(item);
  const timestamp = item.record.occurredAt.toISOString();
  const msgId = item.type === 'finding' ? 'finding' : 'audit';
  const sd = `[${SD_ID} id="${escapeParam(item.record.id)}" org="${escapeParam(item.record.orgId)}" type="${msgId}"]`;
  const message = options.format === 'cef' ? cefMessage(item, options.version) : JSON.stringify(recordJson(item));
  return `<${priority}>1 ${timestamp} ${headerField(options.hostname, 255)} svc - ${msgId} ${sd} ${message}`;
}

/** Octet-counting frame (RFC 6587 3.4.1, RFC 5425 4.3): `MSG-LEN SP SYSLOG-MSG`, the length in bytes. */
export function octetFrame(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `, 'ascii'), body]);
}

/** A Splunk HEC event object (one per record; a batch is these, concatenated). */
export function hecEvent(item: SiemRecord, options: { hostname: string; index: string | null }): Record<string, unknown> {
  return {
    time: item.record.occurredAt.getTime() / 1000,
    host: options.hostname,
    source: 'svc',
    sourcetype: item.type === 'finding' ? 'svc:finding' : 'svc:audit',
    ...(options.index === null ? {} : { index: options.index }),
    event: recordJson(item),
  };
}
