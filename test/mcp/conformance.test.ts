/**
 * The official MCP conformance suite gives the same result per scenario through svc's proxy as
 * against the upstream directly (docs/mcp.md "Conformance").
 */
import { describe, expect, it } from 'vitest';
import { compareDirectAndProxied } from './conformance.ts';

describe('MCP conformance through the proxy', () => {
  it('passes and fails exactly the scenarios the upstream passes and fails directly', async () => {
    const { direct, proxied } = await compareDirectAndProxied();
    expect(Object.keys(direct).length).toBeGreaterThan(20);
    expect(proxied).toEqual(direct);
  }, 600_000);
});
