/**
 * The verification sensor (`svc sensor --class verification`): a process with no database and no
 * cache that serves POST /api/v1/verify next to the traffic, with the verification pillar's own
 * core (runVerification, the same layers and policy resolution `svc serve` uses), and emits a
 * finding to the collector for every verification that fails. The policy is the default one with
 * the request's own `policy` merged over it, as the guard API does; a paused sensor answers
 * without inspecting.
 *
 * It serves the local network beside the model traffic it guards and takes no API key (it holds
 * no key table); bind it to loopback or a private interface (docs/sensors-operations.md).
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { SvcError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { sensorErrorHandler } from './sensor-error-routes.ts';
import { DEFAULT_POLICY, GuardRequestSchema, PolicyError, resolvePolicy, redactContent, runVerification, type PolicyBody, type Verification } from '../verification/index.ts';
import type { FindingData } from './wire.ts';
import type { SensorAgent } from './sensor/agent.ts';

const checkGuard = TypeCompiler.Compile(GuardRequestSchema);

export interface VerificationSensorOptions {
  readonly agent: SensorAgent;
  readonly logger: Logger;
}

/** The finding a failed verification becomes: severity and decision follow the strongest action. */
export function verificationFinding(verification: Verification, requestId: string): FindingData {
  const failedLayers = Object.entries(verification.layers).filter(([, layer]) => layer.verdict === 'fail' || (layer.verdict === 'error' && layer.fails === 'closed'));
  const severity = verification.action === 'block' ? 'high' : verification.action === 'annotate' ? 'low' : 'medium';
  const decision = verification.action === 'block' ? 'block' : verification.action === 'annotate' ? 'log' : 'alert';
  return {
    pillar: 'verification',
    kind: 'llm_output',
    severity,
    threat_score: Math.min(1, Math.max(0, ...failedLayers.map(([, layer]) => layer.score))),
    decision,
    patterns: failedLayers.slice(0, 64).map(([name, layer]) => ({ id: `verification.${name}`, name: `Verification ${name} layer failed`, confidence: Math.min(1, Math.max(0, layer.score)) })),
    request_id: requestId,
    session_id: null,
    details: {
      action: verification.action,
      content_sha256: verification.content_sha256,
      reasons: failedLayers.flatMap(([name, layer]) => layer.findings.slice(0, 8).map((finding) => `${name}:${finding.reason}`)).slice(0, 32),
    },
  };
}

/** Builds the sensor's HTTP server (not listening). */
export function buildVerificationSensor(options: VerificationSensorOptions) {
  const { agent, logger } = options;
  const app = Fastify({ loggerInstance: logger, disableRequestLogging: true, bodyLimit: 4 * 1_048_576, genReqId: () => randomUUID() });
  app.setErrorHandler(sensorErrorHandler(logger, 'verification', 'INVALID_JSON'));

  app.get('/health', async () => ({ status: 'ok', sensor_id: agent.sensorId, class: 'verification', paused: agent.config().paused }));

  app.post('/api/v1/verify', async (request) => {
    if (!checkGuard.Check(request.body)) {
      const first = checkGuard.Errors(request.body).First();
      throw new SvcError('VALIDATION_FAILED', { details: { field: `body${first?.path.replaceAll('/', '.') ?? ''}`, reason: 'schema' } });
    }
    const body = request.body as Static<typeof GuardRequestSchema>;
    if (agent.config().paused) return { passed: true, action: 'none', inspected: false };
    let policy = DEFAULT_POLICY;
    if (body.policy !== undefined) {
      try {
        policy = resolvePolicy({ ...(body.policy as PolicyBody) });
      } catch (error) {
        if (error instanceof PolicyError) throw new SvcError('VALIDATION_FAILED', { message: error.message, details: { field: 'body.policy', reason: 'policy' } });
        throw error;
      }
    }
    const verification: Verification & { redacted_content?: string } = await runVerification(
      {
        content: body.response,
        finishReason: body.finish_reason ?? null,
        ...(body.sources === undefined ? {} : { sources: body.sources }),
        ...(body.question === undefined ? {} : { question: body.question }),
        ...(body.schema === undefined ? {} : { schema: body.schema }),
        ...(body.tools === undefined ? {} : { tools: body.tools }),
        ...(body.tool_calls === undefined ? {} : { toolCalls: body.tool_calls }),
        ...(body.system_prompt === undefined ? {} : { systemPrompts: [body.system_prompt] }),
      },
      policy,
    );
    if (verification.action === 'redact') verification.redacted_content = redactContent(body.response, verification, policy);
    if (!verification.passed) {
      const outcome = await agent.emit(request.id, verificationFinding(verification, request.id));
      return { ...verification, request_id: request.id, finding: outcome };
    }
    return { ...verification, request_id: request.id };
  });
  return app;
}
