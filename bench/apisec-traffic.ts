/**
 * Traffic generator for the shadow/zombie measurement: a synthetic API with a known inventory
 * (an OpenAPI document), undocumented routes (shadow truth), routes documented as deprecated and
 * still served (zombie truth), routes documented as deprecated and removed (answer 410: not
 * zombies), and realistic noise — static assets, health probes, scanner probes answered 404, typos
 * and random 404s. Concrete paths use numeric ids, UUIDs, hex digests, dates, slugs and e-mail
 * addresses, so the analyzer's path normalization is exercised. Seeded: the same seed gives the
 * same traffic.
 */
import { seededRandom as random } from './lib.ts';

export interface SyntheticRequest {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  secure: boolean;
}

export interface SyntheticApi {
  openapi: Record<string, unknown>;
  /** "METHOD /template" of every undocumented live route. */
  shadow: Set<string>;
  /** "METHOD /template" of every deprecated, still-served route. */
  zombie: Set<string>;
  requests: SyntheticRequest[];
}

type Param = 'id' | 'uuid' | 'hash' | 'date' | 'slug' | 'email' | 'word';

interface Route {
  method: string;
  template: string;
  kind: 'documented' | 'shadow' | 'zombie' | 'removed';
  weight: number;
}

const RESOURCES = ['users', 'orders', 'products', 'invoices', 'carts', 'reviews', 'payments', 'shipments', 'coupons', 'tickets', 'accounts', 'devices', 'sessions', 'reports', 'files', 'teams', 'projects', 'tasks', 'comments', 'webhooks'];
const SUB = ['items', 'history', 'notes', 'attachments', 'members', 'events', 'refunds', 'labels', 'settings', 'logs'];
const PARAMS: Param[] = ['id', 'id', 'id', 'uuid', 'uuid', 'hash', 'slug', 'date', 'email'];

function instance(template: string, next: () => number): string {
  return template.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const pick = Math.floor(next() * 1e9);
    switch (name as Param) {
      case 'id':
        return String(1 + (pick % 99_999));
      case 'uuid':
        return `${pick.toString(16).padStart(8, '0')}-${(pick % 65_536).toString(16).padStart(4, '0')}-4${(pick % 4_096).toString(16).padStart(3, '0')}-a${(pick % 4_095).toString(16).padStart(3, '0')}-${(pick * 7).toString(16).padStart(12, '0').slice(0, 12)}`;
      case 'hash':
        return `${(pick * 2_654_435_761).toString(16).padStart(16, 'a')}${pick.toString(16).padStart(24, '0')}`.slice(0, 40);
      case 'date':
        return `2026-${String(1 + (pick % 12)).padStart(2, '0')}-${String(1 + (pick % 28)).padStart(2, '0')}`;
      case 'slug':
        return ['item', ...['summer', 'sale', 'blue', 'running', 'shoes', 'guide', 'new', 'best', 'cheap', 'red'].filter((_, index) => (pick >> index) & 1).slice(0, 3)].join('-') + `-${pick % 1_000}`;
      case 'email':
        return `user${pick % 10_000}@example.com`;
      default:
        return 'x';
    }
  });
}

/** Builds the API (routes and their truth) and `count` requests over it with `noiseShare` of noise. */
export function generateTraffic(options: { seed?: number; count?: number; noiseShare?: number } = {}): SyntheticApi {
  const next = random(options.seed ?? 7);
  const routes: Route[] = [];
  const used = new Set<string>();
  const add = (method: string, template: string, kind: Route['kind']) => {
    const key = `${method} ${template}`;
    if (used.has(key)) return;
    used.add(key);
    routes.push({ method, template, kind, weight: 0.2 + next() * 3 });
  };
  for (const resource of RESOURCES) {
    const param = PARAMS[Math.floor(next() * PARAMS.length)]!;
    const base = `/api/v1/${resource}`;
    add('GET', base, 'documented');
    add('POST', base, 'documented');
    add('GET', `${base}/{${param}}`, 'documented');
    add('PUT', `${base}/{${param}}`, 'documented');
    add('DELETE', `${base}/{${param}}`, next() < 0.15 ? 'zombie' : 'documented');
    const sub = SUB[Math.floor(next() * SUB.length)]!;
    add('GET', `${base}/{${param}}/${sub}`, 'documented');
    const roll = next();
    if (roll < 0.3) add('GET', `${base}/{${param}}/export`, 'shadow');
    else if (roll < 0.45) add('POST', `${base}/{${param}}/debug`, 'shadow');
    else if (roll < 0.55) add('GET', `/api/v0/${resource}`, 'zombie');
    else if (roll < 0.65) add('GET', `/api/v0/${resource}/{${param}}`, 'removed');
    if (next() < 0.25) add('GET', `/internal/${resource}/stats`, 'shadow');
  }
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.kind === 'shadow') continue;
    const item = (paths[route.template] ??= {});
    item[route.method.toLowerCase()] = { responses: { 200: { description: 'ok' } }, ...(route.kind === 'zombie' || route.kind === 'removed' ? { deprecated: true } : {}) };
  }
  const openapi = { openapi: '3.0.3', info: { title: 'synthetic', version: '1' }, paths };
  const shadow = new Set(routes.filter((route) => route.kind === 'shadow').map((route) => `${route.method} ${route.template}`));
  const zombie = new Set(routes.filter((route) => route.kind === 'zombie').map((route) => `${route.method} ${route.template}`));

  const totalWeight = routes.reduce((sum, route) => sum + route.weight, 0);
  const pickRoute = (): Route => {
    let target = next() * totalWeight;
    for (const route of routes) {
      target -= route.weight;
      if (target <= 0) return route;
    }
    return routes[routes.length - 1]!;
  };
  const noise: (() => SyntheticRequest)[] = [
    () => ({ method: 'GET', path: `/static/${['app', 'vendor', 'main'][Math.floor(next() * 3)]}.${Math.floor(next() * 1e6).toString(16)}.js`, status: 200, headers: {}, secure: true }),
    () => ({ method: 'GET', path: `/assets/img/${Math.floor(next() * 500)}.png`, status: 200, headers: {}, secure: true }),
    () => ({ method: 'GET', path: ['/favicon.ico', '/robots.txt', '/healthz', '/health', '/.well-known/security.txt'][Math.floor(next() * 5)]!, status: 200, headers: {}, secure: true }),
    () => ({ method: 'GET', path: ['/.env', '/wp-admin/install.php', '/.git/config', '/phpmyadmin/index.php', '/admin.php', '/server-status', '/actuator/env', '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php', '/backup.zip', '/config.php.bak'][Math.floor(next() * 10)]!, status: 404, headers: { 'user-agent': 'Mozilla/5.0 zgrab/0.x' }, secure: false }),
    () => ({ method: 'GET', path: `/api/v1/${RESOURCES[Math.floor(next() * RESOURCES.length)]}/${Math.floor(next() * 1e6)}/${['edit', 'admin', 'raw', 'old'][Math.floor(next() * 4)]}`, status: 404, headers: {}, secure: true }),
    () => ({ method: ['POST', 'PATCH', 'OPTIONS'][Math.floor(next() * 3)]!, path: `/api/v1/${RESOURCES[Math.floor(next() * RESOURCES.length)]}/${Math.floor(next() * 1e6)}/items`, status: 405, headers: {}, secure: true }),
    () => ({ method: 'GET', path: `/api/v1/${RESOURCES[Math.floor(next() * RESOURCES.length)]}s`, status: 404, headers: {}, secure: true }),
  ];
  const requests: SyntheticRequest[] = [];
  const count = options.count ?? 50_000;
  const noiseShare = options.noiseShare ?? 0.2;
  for (let index = 0; index < count; index += 1) {
    if (next() < noiseShare) {
      requests.push(noise[Math.floor(next() * noise.length)]!());
      continue;
    }
    const route = pickRoute();
    const authenticated = route.kind === 'documented' ? next() < 0.95 : next() < 0.4;
    requests.push({
      method: route.method,
      path: instance(route.template, next),
      status: route.kind === 'removed' ? 410 : route.method === 'POST' ? 201 : 200,
      headers: authenticated ? { authorization: 'Bearer token' } : {},
      secure: next() < 0.9,
    });
  }
  return { openapi, shadow, zombie, requests };
}
