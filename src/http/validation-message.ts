/**
 * Turns Ajv's validation errors into a message a user can act on: it names the offending field
 * (`body.scope`), and for enumerations the allowed values; an unknown property is named as such.
 * Ajv reports a union of literals as one `const` error per branch plus an `anyOf`; they are
 * gathered into one list here.
 */
import { SvcError } from '../platform/errors.ts';

export interface AjvIssue {
  keyword: string;
  instancePath: string;
  params?: Record<string, unknown>;
  message?: string;
}

function fieldOf(context: string, instancePath: string, extra?: string): string {
  const path = [instancePath.replace(/^\//, '').replaceAll('/', '.'), extra].filter((part) => part !== undefined && part !== '').join('.');
  return path === '' ? context : `${context}.${path}`;
}

export function validationError(issues: readonly AjvIssue[], context: string): SvcError {
  const first = issues[0];
  if (first === undefined) return new SvcError('VALIDATION_FAILED', { details: { field: context, reason: 'invalid' } });
  const samePath = issues.filter((issue) => issue.instancePath === first.instancePath);
  const allowed = samePath.flatMap((issue) => {
    if (issue.keyword === 'const') return [issue.params?.allowedValue];
    if (issue.keyword === 'enum' && Array.isArray(issue.params?.allowedValues)) return issue.params.allowedValues as unknown[];
    return [];
  });
  if (allowed.length > 0) {
    const field = fieldOf(context, first.instancePath);
    const values = [...new Set(allowed.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))))];
    return new SvcError('VALIDATION_FAILED', {
      message: `${field} must be one of: ${values.join(', ')}`,
      details: { field, reason: 'enum', allowed: values },
    });
  }
  if (first.keyword === 'additionalProperties' && typeof first.params?.additionalProperty === 'string') {
    const property = first.params.additionalProperty;
    const field = fieldOf(context, first.instancePath, property);
    return new SvcError('VALIDATION_FAILED', { message: `${field} is not a known property`, details: { field, reason: 'unknown_property' } });
  }
  const missing = typeof first.params?.missingProperty === 'string' ? first.params.missingProperty : undefined;
  const field = fieldOf(context, first.instancePath, missing);
  return new SvcError('VALIDATION_FAILED', {
    message: `${field} ${first.message ?? 'is not valid'}`,
    details: { field, reason: first.keyword },
  });
}
