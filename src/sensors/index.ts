/**
 * Sensors capability (self-hosted topology, docs/sensors.md): the wire contract both ends speak
 * (wire.ts), licences (licence.ts), the sensors-per-plan limit (limits.ts) and the collector
 * (collector/: core and store; routes.ts: its HTTP surface). Outside code uses only these exports.
 */
export {
  WIRE_VERSION,
  MAX_BATCH,
  CLOCK_SKEW_MS,
  DEDUPLICATION_MS,
  HEARTBEAT_INTERVAL_S,
  DEFAULT_REPLAY_RATE,
  FINDING_TYPE,
  FINDING_MEDIA_TYPE,
  HEADERS as SENSOR_HEADERS,
  SENSOR_CLASSES,
  SEVERITIES,
  buildFinding,
  signFinding,
  signRequest,
  canonicalBytes,
  publicKeyFromText,
  publicKeyText,
  verifySignature,
  wireVersionStanding,
  sensorSource,
} from './wire.ts';
export type { FindingData, FindingEvent, FindingInput, SensorClass, Severity } from './wire.ts';
export { createLicenceGate, verifyLicence, signLicence, LicenceError, LICENCE_FORMAT } from './licence.ts';
export type { Licence, LicenceGate, LicenceState, SignedLicence } from './licence.ts';
export { sensorsAllowedByPlan } from './limits.ts';
export { createCollector, STALE_AFTER_MS } from './collector/collector.ts';
export { createGatewayContexts } from './collector/gateway-context.ts';
export type { GatewayContext, GatewayContexts, GatewayUsageReport } from './collector/gateway-context.ts';
export { createMcpContextSource } from './collector/mcp-context.ts';
export type { McpSensorContext } from './collector/mcp-context.ts';
export { createDatabaseCaStorage } from './collector/ca-store.ts';
export type { SensorCertificate } from './collector/collector.ts';
export {
  openCertificateAuthority,
  generateSensorKey,
  createCertificateRequest,
  renewalDue,
  renewalTime,
  CertificateError,
  SENSOR_CERTIFICATE_LIFETIME_MS,
} from './certificates.ts';
export type { CertificateAuthority, SharedCaStorage } from './certificates.ts';
export type { Collector, CollectorDeps, FindingResult, SensorDirective, SensorState, SensorView, SignedItem } from './collector/collector.ts';
export { sensorRoutes, type SensorRoutesOptions } from './routes.ts';
export { startSensorListener, listenerSensorId, certificateSensorId } from './listener.ts';
export type { SensorListener, SensorListenerOptions } from './listener.ts';
export { DEFAULT_SENSOR_CONFIG, ENROLMENT_TOKEN_PREFIX, countSensors } from './collector/store.ts';
export type { HeartbeatReport, SensorConfig } from './collector/store.ts';
export { runSensor, SensorUsageError, SensorStartError, SENSOR_USAGE } from './sensor/run.ts';
export type { RunningSensor } from './sensor/run.ts';
