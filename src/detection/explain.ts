/** Builds the human-readable explanation of a decision (no user content is quoted). */
import type { Decision, Evidence, Finding, TierName } from './types.ts';

export function explain(options: {
  decision: Decision;
  score: number;
  findings: readonly Finding[];
  evidence: readonly Evidence[];
  factor: number;
  requestCount: number;
  autoBlocked: boolean;
  immediateBlock: boolean;
  failedOpen: readonly TierName[];
  fragmentMatch: boolean;
  hijack?: boolean;
}): string {
  const parts: string[] = [];
  const top = [...options.findings].sort((left, right) => right.confidence - left.confidence).slice(0, 3);
  if (top.length === 0) parts.push('No attack pattern or signal matched.');
  else parts.push(`Matched ${top.map((finding) => `${finding.name} (${finding.category}, ${finding.confidence.toFixed(2)})`).join('; ')}.`);
  const transforms = options.evidence.map((item) => item.transform).filter((name) => !name.startsWith('wrapper:') || name === 'wrapper:task-frame');
  if (transforms.length > 0) parts.push(`Normalization applied: ${[...new Set(transforms)].join(', ')}.`);
  if (options.immediateBlock) parts.push('T1 confidence above 0.9: blocked immediately.');
  if (options.fragmentMatch) parts.push('An attack was found across this session\'s recent fragments.');
  if (options.factor > 1) parts.push(`Session escalation x${options.factor} at request ${options.requestCount}.`);
  if (options.hijack === true) parts.push('Agent-hijacking class: blocked by default.');
  if (options.autoBlocked) parts.push('Automatic block: 8 or more requests in the session and this request carries a threat signal.');
  if (options.failedOpen.length > 0) parts.push(`Tier(s) ${options.failedOpen.join(', ')} failed and were skipped (fail open).`);
  parts.push(`Threat score ${options.score.toFixed(2)} → ${options.decision}.`);
  return parts.join(' ');
}
