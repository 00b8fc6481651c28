/**
 * The methods a path answers to, from the app's route table: the not-found handler answers
 * 405 METHOD_NOT_ALLOWED with an Allow header when the path exists under another method, and
 * 404 ROUTE_NOT_FOUND only when no route has that path.
 */

export interface RoutePattern {
  method: string;
  url: string;
}

const cache = new WeakMap<readonly RoutePattern[], { size: number; matchers: { method: string; pattern: RegExp }[] }>();

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compile(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : escape(segment)))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

export function allowedMethods(routes: readonly RoutePattern[], path: string): string[] {
  let entry = cache.get(routes);
  if (entry === undefined || entry.size !== routes.length) {
    entry = { size: routes.length, matchers: routes.map((route) => ({ method: route.method, pattern: compile(route.url) })) };
    cache.set(routes, entry);
  }
  const methods = new Set<string>();
  for (const matcher of entry.matchers) if (matcher.pattern.test(path)) methods.add(matcher.method);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
