/**
 * The API inventory of a gateway, read from its OpenAPI document (3.x `paths` with `servers`, or
 * Swagger 2 `paths` with `basePath`): documented operations as (method, path template,
 * deprecated). Matching a concrete path is by segments — a `{param}` segment matches any one
 * segment — with literal segments preferred over parameters when several templates match.
 */

export interface InventoryOperation {
  readonly method: string;
  readonly template: string;
  readonly deprecated: boolean;
}

export interface Inventory {
  readonly operations: readonly InventoryOperation[];
  /** The documented operation a request matches, or null (undocumented). */
  match(method: string, path: string): InventoryOperation | null;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const MAX_OPERATIONS = 5_000;

function basePathOf(document: Record<string, unknown>): string {
  if (typeof document.basePath === 'string') return document.basePath;
  const servers = document.servers;
  if (Array.isArray(servers) && servers.length > 0) {
    const url = (servers[0] as { url?: unknown }).url;
    if (typeof url === 'string') {
      try {
        return new URL(url, 'http://placeholder').pathname;
      } catch {
        return '';
      }
    }
  }
  return '';
}

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '');
}

/** Validates the shape svc needs; returns a message naming the problem, or null. */
export function openApiProblem(document: unknown): string | null {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return 'must be an object';
  const record = document as Record<string, unknown>;
  if (typeof record.openapi !== 'string' && typeof record.swagger !== 'string') return 'needs an "openapi" (3.x) or "swagger" (2.0) version field';
  if (typeof record.paths !== 'object' || record.paths === null || Array.isArray(record.paths)) return 'needs a "paths" object';
  return null;
}

export function buildInventory(document: unknown): Inventory {
  const operations: InventoryOperation[] = [];
  if (openApiProblem(document) === null) {
    const record = document as Record<string, unknown>;
    const base = basePathOf(record).replace(/\/$/, '');
    for (const [path, item] of Object.entries(record.paths as Record<string, unknown>)) {
      if (typeof item !== 'object' || item === null) continue;
      for (const method of METHODS) {
        const operation = (item as Record<string, unknown>)[method];
        if (typeof operation !== 'object' || operation === null) continue;
        const template = `/${splitPath(`${base === '/' ? '' : base}${path}`).join('/')}`;
        operations.push({ method: method.toUpperCase(), template, deprecated: (operation as { deprecated?: unknown }).deprecated === true });
        if (operations.length >= MAX_OPERATIONS) break;
      }
    }
  }
  const byLength = new Map<number, { operation: InventoryOperation; segments: string[] }[]>();
  for (const operation of operations) {
    const segments = splitPath(operation.template);
    const list = byLength.get(segments.length) ?? [];
    list.push({ operation, segments });
    byLength.set(segments.length, list);
  }
  return {
    operations,
    match(method, path) {
      const question = path.indexOf('?');
      const segments = splitPath(question < 0 ? path : path.slice(0, question));
      const candidates = byLength.get(segments.length);
      if (candidates === undefined) return null;
      let best: InventoryOperation | null = null;
      let bestLiterals = -1;
      for (const { operation, segments: template } of candidates) {
        if (operation.method !== method && !(method === 'HEAD' && operation.method === 'GET')) continue;
        let literals = 0;
        let matches = true;
        for (let index = 0; index < template.length; index += 1) {
          const part = template[index]!;
          if (part.startsWith('{') && part.endsWith('}')) continue;
          if (part !== segments[index]) {
            matches = false;
            break;
          }
          literals += 1;
        }
        if (matches && literals > bestLiterals) {
          best = operation;
          bestLiterals = literals;
        }
      }
      return best;
    },
  };
}
