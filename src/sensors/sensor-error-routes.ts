/**
 * The part the three sensor routes files share (gateway, mcp, verification): the one error answer
 * their HTTP servers give — an SvcError as its catalogue entry with its headers; a schema failure as VALIDATION_FAILED naming
 * the field; another client error as BODY_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE or the class's own
 * code for an unreadable body; anything else logged and answered INTERNAL (no internal text).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, SvcError, type ErrorCode } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';

/** The error handler of a sensor's Fastify app; `unreadable` is its code for a body it cannot read. */
export function sensorErrorHandler(logger: Logger, sensorClass: string, unreadable: ErrorCode) {
  return (error: FastifyError | SvcError, request: FastifyRequest, reply: FastifyReply) => {
    let svcError: SvcError;
    if (error instanceof SvcError) svcError = error;
    else if ((error as FastifyError).validation !== undefined) {
      const first = (error as FastifyError).validation![0];
      svcError = new SvcError('VALIDATION_FAILED', { details: { field: `${(error as FastifyError).validationContext ?? 'body'}${first?.instancePath.replaceAll('/', '.') ?? ''}`, reason: first?.keyword ?? 'schema' } });
    } else {
      const status = (error as FastifyError).statusCode;
      const code: ErrorCode | null = status === 413 ? 'BODY_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status !== undefined && status >= 400 && status < 500 ? unreadable : null;
      if (code === null) logger.error({ err: error }, `${sensorClass} sensor request failed`);
      svcError = new SvcError(code ?? 'INTERNAL');
    }
    if (svcError.headers) for (const [name, value] of Object.entries(svcError.headers)) void reply.header(name, value);
    void reply.status(svcError.status);
    return errorBody(svcError.code, svcError.message, request.id, svcError.details);
  };
}
