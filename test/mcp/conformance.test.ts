/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, every active server
 * scenario) passes against the conformance fixture directly and gives the same result per
 * scenario through svc's proxy (docs/mcp.md "Conformance"). The two runs go at once.
 */
import { describe, expect, it } from 'vitest';
import { compareDirectAndProxied } from './conformance.ts';

describe('MCP conformance through the proxy', () => {
  it('passes every server scenario of the suite through svc exactly as against the upstream directly, DNS-rebinding protection included', async () => {
    const { direct, proxied } = await compareDirectAndProxied();
    expect(Object.keys(direct).length).toBeGreaterThanOrEqual(30);
    expect(proxied).toEqual(direct);
    const failing = Object.entries(proxied).filter(([, result]) => result.failed > 0 || result.passed === 0).map(([name]) => name);
    expect(failing).toEqual([]);
    expect(proxied['dns-rebinding-protection']).toEqual({ passed: 2, failed: 0 });
  }, 240_000);
});
