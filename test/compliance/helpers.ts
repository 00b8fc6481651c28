/**
 * Helpers of the compliance tests: HTTP calls as a client makes them, and the audit check every
 * compliance call needs — its entry is on the caller's chain (found by the call's request id)
 * and the chain still verifies.
 */
import { expect } from 'vitest';
import type { TestContext } from '../helpers/app.ts';

export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON answers of many shapes
  requestId: string;
  headers: Record<string, unknown>;
  raw: Buffer;
}

export async function call(context: TestContext, key: string | null, method: string, url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await context.app.inject({
    method: method as 'GET',
    url,
    headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...headers },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  const text = response.body;
  let body: unknown = null;
  if ((response.headers['content-type'] ?? '').toString().includes('json') && text !== '') body = JSON.parse(text);
  return { status: response.statusCode, body, requestId: String(response.headers['x-request-id']), headers: response.headers, raw: response.rawPayload };
}

/** The audit entry of one call (by its request id) with the expected action and outcome; the chain verifies. */
export async function expectAudited(context: TestContext, adminKey: string, answer: Answer, action: string, outcome: 'success' | 'refused', code?: string): Promise<Record<string, unknown>> {
  const page = await call(context, adminKey, 'GET', `/api/v1/audit?action=${encodeURIComponent(action)}&limit=50`);
  expect(page.status).toBe(200);
  const records = page.body.records as Array<{ actor: string; action: string; outcome: string; target: string | null; details: Record<string, unknown> }>;
  const entries = records.filter((record) => record.details.request_id === answer.requestId);
  expect(entries, `${action} entry of request ${answer.requestId}`).toHaveLength(1);
  const entry = entries[0]!;
  expect(entry.outcome).toBe(outcome);
  expect(entry.actor).toMatch(/^(api_key|user):/);
  expect(entry.details.status).toBe(answer.status);
  if (code !== undefined) expect(entry.details.code).toBe(code);
  const verified = await call(context, adminKey, 'GET', '/api/v1/audit/verify');
  expect(verified.body).toMatchObject({ ok: true, first_bad: null });
  return entry as unknown as Record<string, unknown>;
}
