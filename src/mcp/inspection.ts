/**
 * The MCP pillar's one door to the detection engine, plus the few content signals the compound
 * chains need (secrets, encodings, egress hosts, credential solicitation). Every scan the proxy
 * makes goes through `createInspector`. Tools from tools/list are inspected as the engine's
 * `tool_definition` kind with the structured tool (poisoning and malicious capability; dual-use
 * tools are allowed); the other definitions a model reads (prompts, resources, the server's
 * instructions) are text scanned as `tool_output`, as are tool results and resource contents
 * (indirect injection, whose findings carry spans into the content). A prompt template's
 * user-role messages (prompts/get) are the text the user sends as their own prompt: scanned as
 * `prompt` (a task it asks for is the point of a template; a jailbreak in it is still found).
 *
 * Posture: the engine's decision is used as is (its thresholds are the org's); the signals here
 * add facts, never lower a decision. All regular expressions are linear (bounded repetitions,
 * no nested quantifiers) and the inputs are bounded by the engine's scan length.
 */
import { LRUCache } from 'lru-cache';
import type { DetectionEngine, InspectKind, Span, Thresholds, ToolDefinitionShape } from '../detection/index.ts';
import { detectPii } from '../gateway/index.ts';

/** Which engine kind each MCP surface is scanned as. */
const KINDS: Readonly<Record<'tool' | 'definition' | 'arguments' | 'result' | 'template', InspectKind>> = {
  tool: 'tool_definition',
  definition: 'tool_output',
  arguments: 'prompt',
  result: 'tool_output',
  template: 'prompt',
};

export interface McpFinding {
  readonly id: string;
  readonly name: string;
  readonly category: string;
  readonly confidence: number;
  /** Where in the scanned text the finding lies (UTF-16 offsets, end exclusive), when the engine knows it. */
  readonly span?: Span;
}

export interface Inspection {
  readonly decision: 'allow' | 'log' | 'alert' | 'challenge' | 'block';
  readonly score: number;
  /** The score the decision was made on (below the log threshold `score` grades the evidence); absent: `score`. */
  readonly decisionScore?: number;
  readonly findings: readonly McpFinding[];
  /** Engine categories plus signal facts (see SIGNALS). */
  readonly categories: ReadonlySet<string>;
  /** The org's thresholds the decision was taken with (T5 findings are weighed against them). */
  readonly thresholds?: Thresholds;
}

export interface InspectContext {
  readonly orgId: string;
  readonly sessionId?: string;
  readonly requestId?: string;
  readonly serverId?: string;
}

export interface McpInspector {
  /**
   * A tool as tools/list returns it, inspected as `tool_definition`; `text` is its model-visible
   * text (definitionText), on which the content signals are computed.
   */
  tool(tool: ToolDefinitionShape, text: string, context: InspectContext): Promise<Inspection>;
  /** A prompt or resource definition or the server's instructions (text, as `tool_output`). */
  definition(text: string, context: InspectContext): Promise<Inspection>;
  /** tools/call arguments leaving toward a server (injection, secrets and personal data). */
  arguments(text: string, context: InspectContext): Promise<Inspection>;
  /** A tool result or resource content on its way to the model (indirect injection). */
  result(text: string, context: InspectContext): Promise<Inspection>;
  /** The user-role text of a prompt template (prompts/get), which the user sends as their prompt. */
  template(text: string, context: InspectContext): Promise<Inspection>;
}

// Facts used by compound chains and reported as findings.
const SECRET = /AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----|\bgh[pousr]_[A-Za-z0-9]{36}\b|\bsk-[A-Za-z0-9_-]{20,80}\b|\bxox[abpr]-[A-Za-z0-9-]{10,80}\b|\baws_secret_access_key\s{0,4}=|\bpassword\s{0,4}[=:]\s{0,4}\S{4}/i;
const CREDENTIAL_STORE = /(?:~|\$HOME|\/home\/[^/\s]{1,64}|\/root)\/\.(?:ssh|aws|gnupg|docker|kube|npmrc|netrc|pgpass|git-credentials)\b|\bid_(?:rsa|ed25519|ecdsa)\b|(?:^|[/\s"'])\.env\b|\/etc\/(?:passwd|shadow)\b|\bcredentials\.json\b|\bwallet\.dat\b/i;
const ENCODED = /[A-Za-z0-9+/]{80,}={0,2}|(?:[0-9a-f]{2}){40,}|(?:%[0-9a-f]{2}){16,}|\\x[0-9a-f]{2}(?:\\x[0-9a-f]{2}){15,}/i;
const DECODE_CALL = /\b(?:base64\s{0,4}-d|base64\.b64decode|atob\s{0,4}\(|Buffer\.from\([^)]{0,200}base64|frombase64string|certutil\s{1,4}-decode|xxd\s{1,4}-r)/i;
const SHELL = /\b(?:bash|sh|zsh|powershell|pwsh|cmd\.exe)\s{1,4}-[ce]\b|\beval\s{0,4}\(|\bexec\s{0,4}\(|\|\s{0,4}(?:ba)?sh\b|\bos\.system\s{0,4}\(|\bsubprocess\.|\bchild_process\b|\bInvoke-Expression\b|\biex\s{0,4}\(/i;
const EGRESS_HOST = /\b(?:pastebin\.com|paste\.ee|hastebin\.com|ghostbin\.\w{2,6}|transfer\.sh|ngrok(?:-free)?\.(?:io|app|dev)|trycloudflare\.com|loca\.lt|serveo\.net|webhook\.site|requestbin\.\w{2,6}|pipedream\.net|interact\.sh|oast\.\w{2,6}|burpcollaborator\.net|discord(?:app)?\.com\/api\/webhooks|hooks\.slack\.com)\b/i;
const RAW_IP_URL = /\b(?:https?|ftp|wss?):\/\/(?:\d{1,3}\.){3}\d{1,3}\b/i;
const URL_ANY = /\b(?:https?|ftp|wss?):\/\/[^\s"'<>]{3,}/i;
const SOLICIT = /\b(?:provide|enter|include|pass|send|share|paste|supply|give|read|append|add)\b[^.\n]{0,80}\b(?:password|passphrase|api[ _-]?key|secret|token|credentials?|ssh key|private key|mnemonic|seed phrase|2fa|otp|cookie)s?\b/i;

/** Fact names the signals add (also read by chains.ts). */
export const SIGNALS = {
  secret: 'signal.secret',
  credentialStore: 'signal.credential-store',
  encoded: 'signal.encoded-payload',
  shell: 'signal.shell-exec',
  egressHost: 'signal.egress-host',
  rawIp: 'signal.raw-ip-egress',
  url: 'signal.url',
  solicit: 'signal.credential-solicitation',
  personalData: 'signal.personal-data',
} as const;

export function contentSignals(text: string): McpFinding[] {
  const found: McpFinding[] = [];
  const add = (id: string, name: string, category: string, confidence: number) => found.push({ id, name, category, confidence });
  const bounded = text.length > 65_536 ? text.slice(0, 65_536) : text;
  if (SECRET.test(bounded)) add(SIGNALS.secret, 'Secret or credential value', 'secret', 0.5);
  if (CREDENTIAL_STORE.test(bounded)) add(SIGNALS.credentialStore, 'Credential store path', 'credential-store', 0.4);
  if (ENCODED.test(bounded) || DECODE_CALL.test(bounded)) add(SIGNALS.encoded, 'Encoded payload', 'encoding', 0.3);
  if (SHELL.test(bounded)) add(SIGNALS.shell, 'Shell execution or eval', 'shell-exec', 0.3);
  if (EGRESS_HOST.test(bounded)) add(SIGNALS.egressHost, 'Tunnel, paste or webhook host', 'egress-host', 0.4);
  if (RAW_IP_URL.test(bounded)) add(SIGNALS.rawIp, 'URL with a raw IP address', 'egress-host', 0.3);
  if (URL_ANY.test(bounded)) add(SIGNALS.url, 'Outbound URL', 'url', 0);
  if (SOLICIT.test(bounded)) add(SIGNALS.solicit, 'Solicits credentials', 'credential-solicitation', 0.4);
  return found;
}

/**
 * Longest answer text (tool result, resource, prompt, error) svc scans: the whole of it, the
 * first 64 KiB through every tier and the rest through the catalogue in windows. A longer one is
 * quarantined unscanned (proxy.ts), since anything past a scanned prefix would reach the model
 * uninspected.
 */
export const MCP_RESULT_SCAN_MAX = 1_048_576;

/** Texts up to this long have their content signals and personal-data finding remembered (TextFacts below). */
const FACTS_TEXT_MAX = 2_048;
/** Texts whose facts are remembered (lru-cache: least recently used forgotten first): at most ~2 MB of keys. */
const FACTS_ENTRIES = 512;

/** What a text carries whatever the surface and the org: both are pure functions of the text. */
interface TextFacts {
  readonly signals: readonly McpFinding[];
  /** The arguments' personal-data finding (null: none); undefined until an arguments scan asks. */
  personal?: McpFinding | null;
}

function personalData(text: string): McpFinding | null {
  const personal = detectPii(text).filter((span) => span.type !== 'IP' && span.type !== 'PERSON' && span.type !== 'URL');
  return personal.length === 0 ? null : Object.freeze({ id: SIGNALS.personalData, name: `Personal data or secrets leaving (${[...new Set(personal.map((span) => span.type))].join(', ')})`, category: 'personal-data', confidence: 0.3 });
}

export function createInspector(engine: DetectionEngine): McpInspector {
  // The signals' eight expressions and the PII scan of a short text, remembered per text: tool
  // calls repeat their argument and result texts (the same query, the same short answer), and
  // the engine already remembers its own analysis of repeated content (analysis-cache.ts). The
  // findings are frozen, so a remembered one is the value a fresh scan would give.
  const facts = new LRUCache<string, TextFacts>({ max: FACTS_ENTRIES });
  const factsOf = (text: string): TextFacts => {
    if (text.length > FACTS_TEXT_MAX) return { signals: contentSignals(text) };
    const known = facts.get(text);
    if (known !== undefined) return known;
    const fresh: TextFacts = { signals: Object.freeze(contentSignals(text).map((signal) => Object.freeze(signal))) };
    facts.set(text, fresh);
    return fresh;
  };
  const run = async (surface: keyof typeof KINDS, text: string, context: InspectContext, extra: readonly McpFinding[], tool?: ToolDefinitionShape, known?: TextFacts): Promise<Inspection> => {
    const threat = await engine.inspect({
      kind: KINDS[surface],
      ...(tool === undefined ? { content: text } : { tool }),
      orgId: context.orgId,
      pillar: 'mcp',
      ...(context.sessionId === undefined ? {} : { sessionId: context.sessionId }),
      ...(context.requestId === undefined ? {} : { requestId: context.requestId }),
      ...(context.serverId === undefined ? {} : { gatewayId: context.serverId }),
      // A result (or a template) is the server's text, not the caller's: scanned whole, and not escalated by the session's call count.
      ...(surface === 'result' || surface === 'template' ? { scanMax: MCP_RESULT_SCAN_MAX, escalate: false } : {}),
    });
    const categories = new Set<string>(threat.categories);
    // Spans point into the scanned text: kept for text kinds (results, the quarantine record and
    // audit carry them); a tool's spans point into the engine's own rendering of it, so dropped.
    const findings: McpFinding[] = threat.patterns_matched.map(({ span, ...pattern }) => ({
      ...pattern,
      category: engine.catalogue.byId(pattern.id)?.category ?? fallbackCategory(pattern.id, threat.categories),
      ...(span === undefined || tool !== undefined ? {} : { span }),
    }));
    for (const signal of [...(known ?? factsOf(text)).signals, ...extra]) {
      categories.add(signal.category);
      findings.push(signal);
    }
    return { decision: threat.decision, score: threat.threat_score, ...(threat.decision_score === undefined ? {} : { decisionScore: threat.decision_score }), findings, categories, thresholds: threat.thresholds };
  };
  return {
    tool: (tool, text, context) => run('tool', text, context, [], tool),
    definition: (text, context) => run('definition', text, context, []),
    arguments: (text, context) => {
      const known = factsOf(text);
      if (known.personal === undefined) known.personal = personalData(text);
      return run('arguments', text, context, known.personal === null ? [] : [known.personal], undefined, known);
    },
    result: (text, context) => run('result', text, context, []),
    template: (text, context) => run('template', text, context, []),
  };
}

// Findings of the ML tiers are not catalogue entries: their id names the family.
function fallbackCategory(id: string, categories: readonly string[]): string {
  if (id.startsWith('tp.')) return 'tool-poisoning';
  return categories.find((category) => category !== 'tool-poisoning') ?? categories[0] ?? 'detection';
}
