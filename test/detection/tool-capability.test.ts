/**
 * Malicious capability in MCP tool definitions, the kinds of issue #35: arbitrary commands run on
 * a target, and privilege escalation as an action rather than a topic. Each tool below was written
 * for this test from the technique.
 */
import { describe, expect, it } from 'vitest';
import { createDetectionEngine } from '../../src/detection/index.ts';
import { detectMaliciousCapability } from '../../src/detection/tool-definition.ts';

const engine = createDetectionEngine({ analysisCache: false });
const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object', properties: { target: { type: 'string' } } } });
const strong = (name: string, description: string) => detectMaliciousCapability(tool(name, description)).filter((finding) => finding.confidence >= 0.6).map((finding) => finding.id);

describe('tools that run commands on a target are recognised', () => {
  it.each([
    ['remote_shell', 'Execute arbitrary shell commands on the target host through the established session.'],
    ['run_everywhere', 'Runs a command on each compromised machine and returns its output.'],
    ['victim_exec', 'Send commands on a victim system and collect the results.'],
  ])('%s is blocked as a malicious capability', async (name, description) => {
    expect(strong(name, description)).toContain('tool.capability.remote-execution-on-target');
    const decision = await engine.inspect({ kind: 'tool_definition', tool: tool(name, description) });
    expect(decision.allowed).toBe(false);
    expect(decision.categories).toContain('malicious-capability');
  });

  it.each([
    ['run_command', 'Execute a shell command on the local machine and return stdout.'],
    ['ssh_exec', 'Run a command on your own server over SSH.'],
    ['execute_command', 'Execute an arbitrary command on the HexStrike AI server with enhanced logging.'],
    ['target_list', 'Run the build command on the selected target platform (ios, android, web).'],
  ])('%s (generic exec) is not', (name, description) => {
    expect(strong(name, description)).toEqual([]);
  });
});

describe('privilege escalation as an action, not as a topic', () => {
  it('blocks a tool that attempts privilege escalation', () => {
    expect(strong('escalate', 'Attempt privilege escalation on the target through misconfigured sudo rules.')).toContain('tool.capability.persistence-privesc');
  });

  it.each([
    ['manage_roles', 'Manages user roles and permissions. Warns when a change would allow privilege escalation.'],
    ['update_policy', 'Updates an IAM policy; policies granting iam:PassRole are reviewed to prevent privilege escalation.'],
  ])('lets the permissions tool %s through', async (name, description) => {
    expect(strong(name, description)).toEqual([]);
    expect((await engine.inspect({ kind: 'tool_definition', tool: tool(name, description) })).allowed).toBe(true);
  });
});
