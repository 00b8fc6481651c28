/**
 * MCP fidelity (docs/mcp.md "Fidelity"): scripted official-SDK sessions against the npm reference
 * servers server-everything and server-filesystem, registered with the defaults and used with
 * the admin key `org create` gives, over Streamable HTTP and over svc's stdio bridge, are
 * identical step by step to the same sessions run directly. Nothing in these sessions is
 * malicious; the malicious steps svc must still catch are in proxy-e2e.test.ts and below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { differences, type Step } from './fidelity.ts';
import { fidelityHarness, type FidelityCase, type FidelityHarness } from './fidelity-run.ts';

let harness: FidelityHarness;

beforeAll(async () => {
  harness = await fidelityHarness();
}, 240_000);

afterAll(async () => {
  await harness?.close();
}, 120_000);

/** The outcome of the step named `name` (the first one). */
const outcomeOf = (steps: readonly Step[], name: string) => steps.find((step) => step.step === name)?.outcome as { ok?: Record<string, unknown>; error?: unknown } | undefined;

async function audit(sessionId: string): Promise<Array<Record<string, unknown>>> {
  await harness.context.services.mcp.flush();
  const response = await harness.context.app.inject({ method: 'GET', url: `/api/v1/mcp/audit?session_id=${sessionId}`, headers: { authorization: `Bearer ${harness.adminKey}` } });
  return response.json().entries;
}

describe.each([
  ['everything-http', 45],
  ['everything-stdio', 45],
  ['filesystem-http', 20],
  ['filesystem-stdio', 20],
] as Array<[FidelityCase, number]>)('a %s session through svc', (which, length) => {
  it('is identical to the direct session in every step', async () => {
    const sessionId = `fidelity-${which}`;
    const { direct, proxied } = await harness.run(which, sessionId);
    expect(direct).toHaveLength(length);
    expect(differences(direct, proxied)).toEqual([]);
    // Nothing quarantined, refused or held on the way (svc's marks are under "svc/" in _meta).
    expect(JSON.stringify(proxied)).not.toContain('"svc/');
    // It went through svc: every tool call of the session is in its audit, none refused.
    const calls = (await audit(sessionId)).filter((entry) => entry.action === 'mcp.tool_call');
    expect(calls.length).toBe(direct.filter((step) => step.step.startsWith('tools/call')).length);
    expect(calls.filter((entry) => entry.outcome !== 'success')).toEqual([]);
    if (which.startsWith('everything')) {
      // The server's instructions reach the client; the admin calls the tools the issue saw refused.
      expect(String((outcomeOf(proxied, 'initialize')?.ok as { instructions?: string }).instructions)).toContain('Everything Server');
      for (const tool of ['get-env', 'trigger-sampling-request', 'trigger-elicitation-request', 'trigger-url-elicitation']) expect(outcomeOf(proxied, `tools/call ${tool}`)?.ok?.isError, tool).toBeUndefined();
      // An unknown tool gets the server's own answer, and the audit says it was not listed.
      expect(JSON.stringify(outcomeOf(proxied, 'tools/call no-such-tool'))).toContain('Tool no-such-tool not found');
      const unknown = calls.find((entry) => entry.tool === 'no-such-tool');
      expect((unknown?.findings as Array<{ id: string }>).map((finding) => finding.id)).toContain('mcp.tool-not-listed');
    } else {
      // The server's own refusal reaches the client as the server wrote it.
      expect(JSON.stringify(proxied)).toContain('Access denied - path outside allowed directories');
    }
  }, 240_000);
});
