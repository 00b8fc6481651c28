/**
 * Compliance capability: the compliance and privacy API (spec, Compliance and privacy) — threats
 * read API, decisions with explainability, appeals and risk assessment, explanations,
 * grievances, model catalog, risk tolerance, privacy endpoints, unlearning and the signed audit
 * export. Every call is chained in the org's audit log.
 */
export { createCompliance, GRIEVANCES_OVERDUE_METRIC } from './compliance.ts';
export type { Compliance, ComplianceDeps } from './compliance.ts';
export { complianceRoutes, optOutHook, type ComplianceRoutesOptions } from './routes.ts';
export { addBusinessDays, addCalendarDays } from './business-days.ts';
export { APPEAL_MACHINE, GRIEVANCE_MACHINE } from './states.ts';
export { COMPLIANCE_OPERATION_RESPONSES, COMPLIANCE_RESPONSE_COMPONENTS, PLAN_REQUIRED_OPERATIONS, STATE_TRANSITION_OPERATIONS } from './openapi.ts';
export { verifyExport, type ExportVerification } from './export-signing.ts';
export { EXPORT_FORMATS } from './audit-export.ts';
