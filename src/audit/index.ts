/**
 * Audit capability: the per-org hash chain, its verification, checkpoints and retention (core,
 * no Fastify), its background work (jobs.ts, block-writer.ts: started by the server lifecycle
 * in the composition root) and its routes plugin.
 */
export { createAuditLog, RETENTION_DAYS, CHECKPOINT_EVERY } from './audit-log.ts';
export type { AuditLog, AuditEntryInput, AuditListOptions, AuditServices, VerifyOptions } from './audit-log.ts';
export type { AuditRecord, BadReason, Checkpoint, FirstBad, VerifyResult } from './chain.ts';
export { auditRoutes, type AuditRoutesOptions } from './routes.ts';
export { startAuditJobs } from './jobs.ts';
export { startBlockAudit, blockEntry } from './block-writer.ts';
export type { BlockAuditWriter } from './block-writer.ts';
export { runAuditVerify } from './verify-command.ts';
export type { AuditVerifyReport } from './verify-command.ts';
