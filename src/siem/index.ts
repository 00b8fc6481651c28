/**
 * SIEM export capability: per-org sinks (syslog RFC 5424 over TCP or TLS in CEF or JSON; HTTP
 * event collector in Splunk HEC shape) streaming findings and audit entries (core:
 * `createSiem(deps)`, background work in `siem.start()`), and the routes plugin. docs/siem.md.
 */
export { createSiem, siemBackoff, DEFAULT_SIEM_POLICY, SIEM_KINDS, SIEM_STREAMS } from './siem.ts';
export type { Siem, SiemDeps, SiemPolicy, SinkInput, SinkView, SiemKind, SiemStream } from './siem.ts';
export { cefMessage, syslogMessage, octetFrame, hecEvent, recordJson, SD_ID } from './format.ts';
export type { SiemRecord, FindingRecord, AuditRecordView } from './format.ts';
export { siemRoutes, type SiemRoutesOptions } from './routes.ts';
