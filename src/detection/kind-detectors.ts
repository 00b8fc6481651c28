/**
 * Kind-specific detectors that run inside T1 next to the catalogue: planted instructions in data
 * (`tool_output`, `llm_output`), malicious capability of a tool (`tool_definition`), leaks of the
 * system prompt or a configured secret (`llm_output`). The kind decides: a sentence typed by the
 * user is a request, the same sentence inside a tool result is planted.
 */
import { detectSecretExtraction } from './extraction.ts';
import { detectPlantedInstructions } from './indirect.ts';
import { detectLeak } from './leak.ts';
import { detectMaliciousCapability, toolDefinitionText } from './tool-definition.ts';
import type { Finding, InspectKind, ToolDefinitionShape } from './types.ts';

/** The parts of an inspect request these detectors read (structurally the engine's InspectRequest). */
export interface KindRequest {
  readonly kind: InspectKind;
  readonly content?: string;
  readonly tool?: ToolDefinitionShape;
  readonly systemPrompt?: string;
  readonly messages?: readonly { readonly role: string; readonly content: string }[];
  readonly secrets?: readonly string[];
}

/** The text the engine scans for a request of a non-HTTP kind. */
export function kindText(request: KindRequest): string {
  if (request.kind === 'tool_definition' && request.tool !== undefined) return toolDefinitionText(request.tool);
  return request.content ?? '';
}

/** The system prompt of an `llm_output` request: `systemPrompt`, else its system messages. */
export function systemPromptOf(request: KindRequest): string {
  if (request.systemPrompt !== undefined) return request.systemPrompt;
  return (request.messages ?? []).filter((message) => message.role === 'system' || message.role === 'developer').map((message) => message.content).join('\n');
}

/** Content-only analyses are cached; an `llm_output` check also depends on its prompt and secrets. */
export function kindUsesAnalysisCache(request: KindRequest): boolean {
  return !(request.kind === 'llm_output' && (systemPromptOf(request) !== '' || (request.secrets?.length ?? 0) > 0));
}

export function kindFindings(request: KindRequest, raw: string): Finding[] {
  switch (request.kind) {
    case 'prompt':
      return detectSecretExtraction(raw);
    case 'tool_output':
      return detectPlantedInstructions(raw);
    case 'llm_output': {
      const systemPrompt = systemPromptOf(request);
      return [...detectLeak(raw, { ...(systemPrompt === '' ? {} : { systemPrompt }), ...(request.secrets === undefined ? {} : { secrets: request.secrets }) }), ...detectPlantedInstructions(raw)];
    }
    case 'tool_definition':
      return request.tool === undefined ? [] : detectMaliciousCapability(request.tool);
    default:
      return [];
  }
}

/**
 * Usage guidance in tool descriptions ("use X before Y", "prefer this tool", "then call Z") is
 * how legitimate servers route the model between their own tools; in a `tool_definition` these
 * catalogue findings are kept as weak evidence (they neither block nor count as agreement for the
 * classifier) unless a stronger poisoning sign is present in the same definition.
 */
const TOOL_GUIDANCE: ReadonlySet<string> = new Set(['tp.prioritize-tool', 'tp.before-using', 'tp.avoid-other-tools', 'pc.then-call-tool', 'tp.execute-this-tool']);
const GUIDANCE_CAP = 0.25;

export function adjustForKind(kind: InspectKind, findings: readonly Finding[]): Finding[] {
  if (kind !== 'tool_definition') return [...findings];
  const strongOther = findings.some((finding) => !TOOL_GUIDANCE.has(finding.id) && finding.confidence >= 0.5);
  if (strongOther) return [...findings];
  return findings.map((finding) => (TOOL_GUIDANCE.has(finding.id) ? { ...finding, confidence: Math.min(finding.confidence, GUIDANCE_CAP) } : finding));
}
