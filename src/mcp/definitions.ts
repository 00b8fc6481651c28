/**
 * Tool definitions as the proxy sees them: the pinned hash of a full definition, the cleaning of
 * model-visible text, and the category a tool falls in for role authorization.
 *
 * Security posture: the hash covers every field a server can use to steer a model (name, title,
 * description, inputSchema, outputSchema, annotations, _meta), in RFC 8785 canonical form, so a
 * change anywhere — a reworded description, a new parameter, a flipped annotation — is a new
 * hash. Cleaning removes characters a human reviewer cannot see but a model reads (ANSI escape
 * sequences, bidirectional controls, zero-width characters); the hash is taken over the
 * definition as the server sent it, so cleaning never hides a change.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { sanitizeJson } from '../platform/db/sanitize.ts';

export const TOOL_CATEGORIES = ['read_files', 'write_files', 'execute_code', 'network_access', 'system_calls', 'none'] as const;
export type ToolCategory = (typeof TOOL_CATEGORIES)[number];

/** The fields of a tool definition that are hashed (everything a server can show a model). */
const TOOL_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', '_meta'] as const;

export function sha256Jcs(value: unknown): string {
  // JCS refuses a lone surrogate (a hostile server's tool name): hashed as U+FFFD, as it is stored.
  let text: string;
  try {
    text = canonicalize(value) ?? 'null';
  } catch {
    text = canonicalize(sanitizeJson(value)) ?? 'null';
  }
  return createHash('sha256').update(text).digest('hex');
}

/** SHA-256 of the JCS form of the definition's hashed fields (absent fields are left out). */
export function definitionHash(definition: Readonly<Record<string, unknown>>): string {
  const picked: Record<string, unknown> = {};
  for (const field of TOOL_FIELDS) if (definition[field] !== undefined) picked[field] = definition[field];
  return sha256Jcs(picked);
}

// CSI / OSC / other ESC sequences, then lone C0/C1 controls other than tab, newline, carriage return.
// Linear: each alternative is a bounded or single-class run.
const ANSI = /\u001b\[[0-?]{0,64}[ -/]{0,16}[@-~]|\u001b\][^\u0007\u001b]{0,4096}(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]|\u009b[0-?]{0,64}[ -/]{0,16}[@-~]/g;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const ZERO_WIDTH = /[\u200b-\u200d\u2060-\u2064\ufeff\u180e\u00ad]/g;
// Unicode tag characters (U+E0000–U+E007F): invisible "ASCII smuggling".
const TAGS = /[\u{e0000}-\u{e007f}]/gu;

export interface Cleaning {
  readonly ansi: number;
  readonly bidi: number;
  readonly zeroWidth: number;
  readonly control: number;
  readonly tags: number;
}

/** Strips invisible and terminal-control characters; returns the text and what was removed. */
export function cleanText(text: string): { text: string; removed: Cleaning | null } {
  // Fast path: plain printable text (the common case) is returned as is.
  if (!/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u{e0000}-\u{e007f}]/u.test(text)) {
    return { text, removed: null };
  }
  let ansi = 0;
  let bidi = 0;
  let zeroWidth = 0;
  let control = 0;
  let tags = 0;
  const cleaned = text
    .replace(ANSI, () => (ansi++, ''))
    .replace(BIDI, () => (bidi++, ''))
    .replace(ZERO_WIDTH, () => (zeroWidth++, ''))
    .replace(TAGS, () => (tags++, ''))
    .replace(CONTROL, () => (control++, ''));
  return { text: cleaned, removed: { ansi, bidi, zeroWidth, control, tags } };
}

/**
 * Cleans every string inside a JSON value (keys included) and counts what was removed. Returns
 * the same object when nothing changed, so the common case allocates nothing.
 */
export function cleanDeep(value: unknown, tally: { count: number; kinds: Set<string> } = { count: 0, kinds: new Set() }, depth = 0): unknown {
  if (typeof value === 'string') {
    const { text, removed } = cleanText(value);
    if (removed === null) return value;
    for (const [kind, count] of Object.entries(removed)) {
      if (count > 0) {
        tally.count += count;
        tally.kinds.add(kind);
      }
    }
    return text;
  }
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const next = cleanDeep(item, tally, depth + 1);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? out : value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const cleanKey = cleanDeep(key, tally, depth + 1) as string;
    const next = cleanDeep(item, tally, depth + 1);
    if (next !== item || cleanKey !== key) changed = true;
    out[cleanKey] = next;
  }
  return changed ? out : value;
}

/** The model-visible text of a definition (what the detection engine scans). */
export function definitionText(definition: Readonly<Record<string, unknown>>): string {
  const parts: string[] = [];
  for (const field of ['title', 'description'] as const) {
    const value = definition[field];
    if (typeof value === 'string') parts.push(value);
  }
  collectSchemaText(definition.inputSchema, parts, 0);
  collectSchemaText(definition.outputSchema, parts, 0);
  return parts.join('\n').slice(0, 65_536);
}

function collectSchemaText(schema: unknown, parts: string[], depth: number): void {
  if (schema === null || typeof schema !== 'object' || depth > 16) return;
  if (Array.isArray(schema)) {
    for (const item of schema) collectSchemaText(item, parts, depth + 1);
    return;
  }
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if ((key === 'description' || key === 'title' || key === 'default') && typeof value === 'string') parts.push(value);
    else if (key === 'enum' && Array.isArray(value)) parts.push(value.filter((item) => typeof item === 'string').join(' '));
    else if (key === 'properties' && value !== null && typeof value === 'object') {
      for (const [name, property] of Object.entries(value as Record<string, unknown>)) {
        parts.push(name);
        collectSchemaText(property, parts, depth + 1);
      }
    } else if (typeof value === 'object') collectSchemaText(value, parts, depth + 1);
  }
}

// Category inference from the tool name's words (split on _ - . / space and camelCase).
const SYSTEM_WORDS = new Set(['env', 'environment', 'processes', 'kill', 'reboot', 'shutdown', 'sysctl', 'systemctl', 'mount', 'chmod', 'chown', 'sudo', 'syscall', 'kernel', 'daemon']);
const EXECUTE_WORDS = new Set(['exec', 'execute', 'run', 'shell', 'command', 'cmd', 'eval', 'evaluate', 'python', 'bash', 'powershell', 'script', 'terminal', 'spawn', 'interpreter', 'repl']);
const NETWORK_WORDS = new Set(['fetch', 'http', 'https', 'url', 'request', 'download', 'upload', 'web', 'browse', 'browser', 'navigate', 'curl', 'wget', 'webhook', 'email', 'mail', 'smtp', 'send', 'post', 'scrape', 'crawl', 'dns', 'socket', 'ping']);
const WRITE_WORDS = new Set(['write', 'edit', 'create', 'delete', 'remove', 'move', 'rename', 'update', 'save', 'put', 'append', 'mkdir', 'rm', 'touch', 'copy', 'patch', 'modify', 'overwrite', 'truncate', 'insert', 'upsert']);
const FILE_WORDS = new Set(['file', 'files', 'dir', 'directory', 'directories', 'folder', 'folders', 'path', 'paths', 'document', 'documents', 'fs', 'filesystem', 'disk', 'text', 'media']);
const FILE_PARAMETERS = /^(path|paths|file|filename|file_path|filepath|directory|dir|folder|source|destination)$/i;
const URL_PARAMETERS = /^(url|uri|href|endpoint|webhook|webhook_url|host|hostname)$/i;
const COMMAND_PARAMETERS = /^(command|cmd|script|code|shell|expression)$/i;

export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

function schemaPropertyNames(schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const properties = (schema as { properties?: unknown }).properties;
  return properties !== null && typeof properties === 'object' ? Object.keys(properties as object) : [];
}

/** Network verbs of a tool name (what it does, not what it mentions: "url" and "request" name things too). */
const NETWORK_VERBS = new Set(['fetch', 'http', 'https', 'download', 'upload', 'browse', 'navigate', 'curl', 'wget', 'webhook', 'email', 'mail', 'smtp', 'send', 'post', 'scrape', 'crawl', 'dns', 'socket', 'ping']);

interface Annotations {
  readonly readOnlyHint?: unknown;
  readonly destructiveHint?: unknown;
  readonly idempotentHint?: unknown;
  readonly openWorldHint?: unknown;
}

/** Whether a tool carries MCP behaviour annotations (any of the four hints as a boolean). */
function annotated(annotations: Annotations): boolean {
  return ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'].some((hint) => typeof annotations[hint as keyof Annotations] === 'boolean');
}

/**
 * The category of a tool (docs/mcp.md "Tool categories"). Configuration wins. Otherwise a tool's
 * MCP annotations (its server's declaration of what it changes) and input schema decide, before
 * its name:
 *
 * - readOnlyHint: true — it changes nothing: network_access when it reaches the open world
 *   (openWorldHint not false) through a URL parameter or a network verb in its name; read_files
 *   when it takes a file parameter or names files; else none. Never write, execute or system.
 * - destructiveHint: false (additive, not read-only): execute_code for a command parameter;
 *   write_files for a file tool whose name says it writes, read_files for other file tools;
 *   network_access for an open-world tool whose name is a network verb (send, fetch, post …);
 *   else none (it adds to the server's own state: toggles, sampling or elicitation round trips).
 * - otherwise (may destroy; the spec's default when destructiveHint is absent): the inference
 *   below, from the schema first, then the name.
 *
 * Unannotated tools (and destructive ones): the most privileged category that name words and
 * parameter names indicate, system_calls > network_access > execute_code > write_files >
 * read_files > none.
 */
export function inferCategory(definition: Readonly<Record<string, unknown>>, configured?: string): ToolCategory {
  if (configured !== undefined && (TOOL_CATEGORIES as readonly string[]).includes(configured)) return configured as ToolCategory;
  const name = typeof definition.name === 'string' ? definition.name : '';
  const words = nameWords(name);
  const parameters = schemaPropertyNames(definition.inputSchema);
  const annotations = (definition.annotations !== null && typeof definition.annotations === 'object' ? definition.annotations : {}) as Annotations;
  const has = (set: ReadonlySet<string>) => words.some((word) => set.has(word));
  const fileParameter = parameters.some((parameter) => FILE_PARAMETERS.test(parameter));
  const urlParameter = parameters.some((parameter) => URL_PARAMETERS.test(parameter));
  const commandParameter = parameters.some((parameter) => COMMAND_PARAMETERS.test(parameter));
  const fileContext = has(FILE_WORDS) || fileParameter;
  const openWorld = annotations.openWorldHint !== false;

  if (annotated(annotations) && annotations.readOnlyHint === true) {
    if (openWorld && (urlParameter || has(NETWORK_VERBS))) return 'network_access';
    return fileContext ? 'read_files' : 'none';
  }
  if (annotated(annotations) && annotations.destructiveHint === false) {
    if (commandParameter) return 'execute_code';
    if (fileContext) return has(WRITE_WORDS) ? 'write_files' : 'read_files';
    if (openWorld && has(NETWORK_VERBS)) return 'network_access';
    return 'none';
  }

  if (has(SYSTEM_WORDS)) return 'system_calls';
  if (urlParameter || has(NETWORK_WORDS)) return 'network_access';
  if (commandParameter || has(EXECUTE_WORDS)) return 'execute_code';
  if (fileContext && (has(WRITE_WORDS) || annotations.destructiveHint === true)) return 'write_files';
  if (fileContext) return 'read_files';
  return 'none';
}
