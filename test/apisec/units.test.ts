/**
 * The API-security building blocks on their own: path normalization, protocol and noise
 * recognition, the inventory, the analyzer's bounds and verdicts, bots, data classes, the
 * challenge (including the interstitial page's own SHA-256), body buffering and header rewriting.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../src/apisec/analyzer.ts';
import { bufferHead, inspectableBody } from '../../src/apisec/body.ts';
import { classifyUserAgent, createBotClassifier, SCANNER_MARK_MS } from '../../src/apisec/bots.ts';
import { challengePage, createChallenges, solveChallenge } from '../../src/apisec/challenge.ts';
import { leadingZeroBits } from '../../src/platform/challenge.ts';
import { classifyData } from '../../src/apisec/data-class.ts';
import { requestHeaders, responseHeaders } from '../../src/apisec/forward.ts';
import { buildInventory } from '../../src/apisec/inventory.ts';
import { noiseOf, normalizePath, recognizeProtocol } from '../../src/apisec/paths.ts';
import type { Gateway } from '../../src/apisec/types.ts';
import { DEFAULT_BOT_POLICY } from '../../src/apisec/types.ts';

function gateway(overrides: Partial<Gateway> = {}): Gateway {
  const now = new Date();
  return {
    id: 'g1', orgId: 'o1', name: 'g', backendUrl: 'http://127.0.0.1:1', mode: 'block', hostname: null, pathPrefix: null, openapi: null,
    settings: { rateLimit: null, botPolicy: DEFAULT_BOT_POLICY, healthCheck: null, timeoutMs: 1_000, blockDetails: 'full' }, createdAt: now, updatedAt: now, ...overrides,
  };
}

describe('path normalization', () => {
  it.each([
    ['/users/123', '/users/{id}'],
    ['/users/123/orders/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b', '/users/{id}/orders/{hash}'],
    ['/orders/3fa85f64-5717-4562-b3fc-2c963f66afa6', '/orders/{uuid}'],
    ['/reports/2026-11-24/summary', '/reports/{date}/summary'],
    ['/posts/how-to-train-your-dragon', '/posts/{slug}'],
    ['/products/blue-shoes-4411', '/products/{slug}'],
    ['/users/alice%40example.com', '/users/{email}'],
    ['/api/v2/user-profiles', '/api/v2/user-profiles'],
    ['/files/', '/files'],
    ['/search?q=1', '/search'],
  ])('turns %s into %s', (path, template) => {
    expect(normalizePath(path)).toBe(template);
  });

  it('recognises REST, GraphQL, gRPC and WebSocket from the request', () => {
    expect(recognizeProtocol('GET', '/items', {})).toBe('rest');
    expect(recognizeProtocol('POST', '/graphql', { 'content-type': 'application/json' })).toBe('graphql');
    expect(recognizeProtocol('GET', '/api?query={me{id}}', {})).toBe('graphql');
    expect(recognizeProtocol('POST', '/pkg.Service/Method', { 'content-type': 'application/grpc+proto' })).toBe('grpc');
    expect(recognizeProtocol('GET', '/ws', { upgrade: 'websocket' })).toBe('websocket');
  });

  it('tells static assets, probes and scanner paths from API paths', () => {
    expect(noiseOf('/static/app.3f2a.js')).toBe('static');
    expect(noiseOf('/robots.txt')).toBe('probe');
    expect(noiseOf('/.env')).toBe('scanner');
    expect(noiseOf('/wp-admin/install.php')).toBe('scanner');
    expect(noiseOf('/api/v1/debug')).toBeNull();
    expect(noiseOf('/users/7')).toBeNull();
  });
});

describe('inventory and analyzer', () => {
  const openapi = { openapi: '3.1.0', servers: [{ url: 'https://api.example.com/v1' }], paths: { '/users/{userId}': { get: {} }, '/users/me': { get: {} }, '/legacy': { get: { deprecated: true } } } };

  it('matches concrete paths to documented templates under the server base path, literals first', () => {
    const inventory = buildInventory(openapi);
    expect(inventory.match('GET', '/v1/users/42')?.template).toBe('/v1/users/{userId}');
    expect(inventory.match('GET', '/v1/users/me')?.template).toBe('/v1/users/me');
    expect(inventory.match('HEAD', '/v1/users/42')?.template).toBe('/v1/users/{userId}');
    expect(inventory.match('DELETE', '/v1/users/42')).toBeNull();
    expect(inventory.match('GET', '/v1/legacy')?.deprecated).toBe(true);
  });

  it('never keeps more endpoints than its bound', () => {
    const analyzer = createAnalyzer({ maxEndpoints: 50, maxPatterns: 100 });
    const target = gateway();
    for (let index = 0; index < 500; index += 1) {
      const observation = analyzer.observeRequest(target, { method: 'GET', path: `/resource${index}/items`, headers: {} });
      analyzer.observeResponse(target, observation.key, { status: 200, authenticated: true, secure: true });
    }
    expect(analyzer.endpoints(target).length).toBe(50);
  });

  it('scores risk from authentication, transport, rate limiting, data class and traffic', () => {
    const analyzer = createAnalyzer();
    const open = gateway({ openapi });
    const observation = analyzer.observeRequest(open, { method: 'GET', path: '/v1/admin/export', headers: {} });
    analyzer.observeResponse(open, observation.key, { status: 200, authenticated: false, secure: false, dataClass: 'Restricted' });
    const [endpoint] = analyzer.endpoints(open);
    expect(endpoint).toMatchObject({ status: 'shadow', risk_factors: { unauthenticated: true, insecure_transport: true, no_rate_limit: true, data_class: 'Restricted' } });
    expect(endpoint!.risk_score).toBeGreaterThan(90);
    expect(analyzer.observeRequest(open, { method: 'GET', path: '/v1/admin/export', headers: {} }).riskBlock).toMatchObject({ status: 'shadow' });
    const guarded = gateway({ id: 'g2', openapi, settings: { ...open.settings, rateLimit: { requestsPerMinute: 60, burst: null } } });
    const safe = analyzer.observeRequest(guarded, { method: 'GET', path: '/v1/admin/export', headers: { authorization: 'Bearer x' } });
    analyzer.observeResponse(guarded, safe.key, { status: 200, authenticated: true, secure: true, dataClass: 'Public' });
    expect(analyzer.endpoints(guarded)[0]!.risk_score).toBeLessThanOrEqual(50);
  });
});

describe('bots', () => {
  it.each([
    ['sqlmap/1.7.2#stable (https://sqlmap.org)', 'scanner'],
    ['curl/8.4.0', 'automation'],
    ['python-requests/2.31.0', 'automation'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36', 'automation'],
    ['Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', 'scraper'],
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'bot'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'human'],
    [undefined, 'automation'],
  ])('classifies the user agent %s as %s', (agent, expected) => {
    expect(classifyUserAgent(agent).class).toBe(expected);
  });

  it('calls a browser user agent without browser headers automation, and a client probing scanner paths a scanner', () => {
    const classifier = createBotClassifier({ verifyCrawlers: false });
    const agent = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const base = { userAgent: agent, headerNames: ['host', 'user-agent'], httpVersion: '1.1', path: '/' };
    expect(classifier.classify({ ...base, headers: { 'user-agent': agent }, clientIp: '10.0.0.1' }).class).toBe('automation');
    const full = { 'user-agent': agent, accept: 'text/html', 'accept-language': 'en', 'accept-encoding': 'gzip' };
    expect(classifier.classify({ ...base, headers: full, clientIp: '10.0.0.2' }).class).toBe('human');
    for (const path of ['/.env', '/.git/config', '/wp-admin/']) classifier.classify({ ...base, headers: full, clientIp: '10.0.0.3', path });
    expect(classifier.classify({ ...base, headers: full, clientIp: '10.0.0.3' }).class).toBe('scanner');
  });

  // Made-up products: the class comes from how an agent describes itself, not from a list of names.
  it.each([
    ['Mozilla/5.0 (compatible; AcmeSecurityScanner/2.1; +https://acme.example/scanner)', 'scanner'],
    ['AcmeCookieAudit/1.0 (compliance crawler; +https://acme.example)', 'scanner'],
    ['Mozilla/5.0 (compatible; AcmeSEOBot/3.0; +https://acme.example/seo)', 'scraper'],
    ['AcmeArchiveBot/0.9 (+https://library.example/web-archiving)', 'scraper'],
    ['Mozilla/5.0 (compatible; AcmeAIBot/1.0; +https://acme.ai/bot)', 'scraper'],
    ['AcmeUptimeMonitor/4.2 (bot; +https://status.example)', 'bot'],
    ['Mozilla/5.0 (compatible; AcmeLinkPreview/1.0 bot; +https://chat.example)', 'bot'],
    ['Acme-HTTP-Client/3.2.1', 'automation'],
    ['python-httpx/0.27.0', 'automation'],
  ])('classifies the self-described agent %s as %s', (agent, expected) => {
    expect(classifyUserAgent(agent).class).toBe(expected);
  });

  it('calls a browser user agent sent with lower-case header names over HTTP/1.1 automation, unless header shape is off behind a proxy', () => {
    const agent = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const headers = { host: 'shop.example', 'user-agent': agent, accept: 'text/html', 'accept-language': 'en', 'accept-encoding': 'gzip' };
    const headerNames = Object.keys(headers);
    const canonical = ['Host', 'User-Agent', 'Accept', 'Accept-Language', 'Accept-Encoding'];
    const signals = { userAgent: agent, headers, headerNames, httpVersion: '1.1', path: '/' };
    const classifier = createBotClassifier({ verifyCrawlers: false });
    expect(classifier.classify({ ...signals, rawHeaderNames: canonical, clientIp: '10.1.0.1' }).class).toBe('human');
    expect(classifier.classify({ ...signals, rawHeaderNames: headerNames, clientIp: '10.1.0.2' }).class).toBe('automation');
    const behindProxy = createBotClassifier({ verifyCrawlers: false, headerShape: false });
    expect(behindProxy.classify({ ...signals, rawHeaderNames: headerNames, clientIp: '10.1.0.3' }).class).toBe('human');
  });

  it('calls a browser user agent without Accept-Language whose first header is not Host automation', () => {
    const agent = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
    const headers = { 'user-agent': agent, accept: '*/*', 'accept-encoding': 'gzip', host: 'shop.example' };
    const classifier = createBotClassifier({ verifyCrawlers: false });
    expect(classifier.classify({ userAgent: agent, headers, headerNames: Object.keys(headers), httpVersion: '1.1', path: '/', clientIp: '10.2.0.1' }).class).toBe('automation');
    const browserOrder = ['host', 'user-agent', 'accept', 'accept-encoding'];
    expect(classifier.classify({ userAgent: agent, headers, headerNames: browserOrder, httpVersion: '1.1', path: '/', clientIp: '10.2.0.2' }).class).toBe('human');
  });

  it('marks only the client that probed scanner paths, not the other clients behind its address', () => {
    const classifier = createBotClassifier({ verifyCrawlers: false });
    const browser = (version: number) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version}.0.0.0 Safari/537.36`;
    const request = (agent: string, path: string, extra: Record<string, string> = {}) => {
      const headers = { host: 'shop.example', 'user-agent': agent, accept: 'text/html', 'accept-language': 'en', 'accept-encoding': 'gzip', ...extra };
      return classifier.classify({ userAgent: agent, headers, headerNames: Object.keys(headers), httpVersion: '1.1', path, clientIp: '203.0.113.7', scope: 'gw_a', now: 1_000_000 });
    };
    for (const path of ['/.env', '/.git/config', '/wp-admin/']) request(browser(120), path);
    expect(request(browser(120), '/').class).toBe('scanner');
    // Same address (a NAT or a load balancer without TRUST_PROXY), other clients.
    expect(request(browser(131), '/').class).toBe('human');
    expect(request(browser(120), '/', { 'accept-language': 'de-DE' }).class).toBe('human');
    expect(request(browser(120), '/', { authorization: 'Bearer another-client' }).class).toBe('human');
    // Same client on another gateway: the mark stays where it was earned.
    const headers = { host: 'shop.example', 'user-agent': browser(120), accept: 'text/html', 'accept-language': 'en', 'accept-encoding': 'gzip' };
    expect(classifier.classify({ userAgent: browser(120), headers, headerNames: Object.keys(headers), httpVersion: '1.1', path: '/', clientIp: '203.0.113.7', scope: 'gw_b', now: 1_000_000 }).class).toBe('human');
  });

  it('lets a scanner mark lapse once the client stops requesting scanner paths, and keeps it while it goes on', () => {
    const classifier = createBotClassifier({ verifyCrawlers: false });
    const agent = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const headers = { host: 'shop.example', 'user-agent': agent, accept: 'text/html', 'accept-language': 'en', 'accept-encoding': 'gzip' };
    const at = (now: number, path = '/') => classifier.classify({ userAgent: agent, headers, headerNames: Object.keys(headers), httpVersion: '1.1', path, clientIp: '203.0.113.8', scope: 'gw_a', now }).class;
    const start = 5_000_000;
    for (const [index, path] of ['/.env', '/.git/config', '/wp-admin/'].entries()) at(start + index * 1_000, path);
    expect(at(start + 5_000)).toBe('scanner');
    expect(at(start + 2_000 + SCANNER_MARK_MS - 1_000)).toBe('scanner');
    // 17 minutes later (the issue's reproduction): no longer a scanner.
    expect(at(start + 17 * 60_000)).toBe('human');
    // One more scanner path later is not three: the earlier ones are out of the window.
    expect(at(start + 40 * 60_000, '/.env')).toBe('human');
    // A scanner that keeps scanning stays marked.
    const later = start + 60 * 60_000;
    for (let index = 0; index < 6; index += 1) at(later + index * 4 * 60_000, '/.env');
    expect(at(later + 5 * 4 * 60_000 + 60_000)).toBe('scanner');
  });

  it('calls machine-regular request timing automation', () => {
    const classifier = createBotClassifier({ verifyCrawlers: false });
    const agent = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
    const headers = { 'user-agent': agent, accept: '*/*', 'accept-language': 'en', 'accept-encoding': 'gzip' };
    let verdict = '';
    for (let index = 0; index < 25; index += 1) verdict = classifier.classify({ userAgent: agent, headers, headerNames: ['host'], clientIp: '10.0.0.9', path: '/', httpVersion: '1.1', now: 1_000_000 + index * 2_000 }).class;
    expect(verdict).toBe('automation');
  });
});

describe('data classification', () => {
  it.each([
    ['{"card":"4111 1111 1111 1111"}', 'Restricted'],
    ['{"user":"a","password":"hunter2"}', 'Restricted'],
    ['{"patient_id":"p-1","diagnosis":"J45"}', 'Restricted'],
    ['{"email":"ann@example.com"}', 'Confidential'],
    ['{"id":7,"status":"shipped"}', 'Internal'],
    ['Welcome to our shop', 'Public'],
  ])('classifies %s as %s', (body, expected) => {
    expect(classifyData(body, body.startsWith('{') ? 'application/json' : 'text/plain').dataClass).toBe(expected);
  });
});

describe('challenge', () => {
  const challenges = createChallenges({ key: Buffer.from('k'.repeat(32)), difficulty: 8 });
  const markUsed = (() => {
    const used = new Set<string>();
    return async (id: string) => (used.has(id) ? false : (used.add(id), true));
  })();

  it('issues a clearance for a correct answer bound to the client and the gateway', async () => {
    const challenge = challenges.issue('gw', '10.0.0.1');
    const nonce = solveChallenge(challenge.token, challenge.difficulty);
    expect(leadingZeroBits(createHash('sha256').update(`${challenge.token}:${nonce}`).digest())).toBeGreaterThanOrEqual(8);
    expect(await challenges.verify({ scope: 'gw', client: '10.0.0.2', token: challenge.token, nonce, markUsed })).toEqual({ ok: false, reason: 'client' });
    const result = await challenges.verify({ scope: 'gw', client: '10.0.0.1', token: challenge.token, nonce, markUsed });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(challenges.cleared(result.clearance, 'gw', '10.0.0.1')).toBe(true);
    expect(challenges.cleared(result.clearance, 'gw', '10.0.0.2')).toBe(false);
    expect(challenges.cleared(result.clearance, 'other', '10.0.0.1')).toBe(false);
    expect(challenges.cleared(result.clearance, 'gw', '10.0.0.1', Date.now() + 16 * 60_000)).toBe(false);
    expect(challenges.cleared(`${result.clearance.slice(0, -2)}xx`, 'gw', '10.0.0.1')).toBe(false);
  });

  it('refuses expired and forged challenges', async () => {
    const challenge = challenges.issue('gw', '10.0.0.1', Date.now() - 10 * 60_000);
    const nonce = solveChallenge(challenge.token, challenge.difficulty);
    expect(await challenges.verify({ scope: 'gw', client: '10.0.0.1', token: challenge.token, nonce, markUsed })).toEqual({ ok: false, reason: 'expired' });
    const forged = createChallenges({ key: Buffer.from('x'.repeat(32)), difficulty: 1 }).issue('gw', '10.0.0.1');
    expect(await challenges.verify({ scope: 'gw', client: '10.0.0.1', token: forged.token, nonce: solveChallenge(forged.token, 1), markUsed })).toEqual({ ok: false, reason: 'signature' });
  });

  it("the interstitial page's own SHA-256 finds an answer the server accepts", async () => {
    const challenge = challenges.issue('gw', '10.0.0.7');
    const html = challengePage(challenge, '/gw/gw/__svc/challenge', 'req-1');
    const script = /<script>\n([\s\S]*?)<\/script>/.exec(html)![1]!;
    const data = /<script id="svc-challenge" type="application\/json">([^<]*)<\/script>/.exec(html)![1]!;
    let posted: { token: string; nonce: string } | null = null;
    const done = new Promise<void>((resolve) => {
      const sandbox = {
        document: { getElementById: (id: string) => (id === 'svc-challenge' ? { textContent: data } : { textContent: '' }) },
        setTimeout: (callback: () => void) => setImmediate(callback),
        fetch: (_url: string, init: { body: string }) => {
          posted = JSON.parse(init.body) as { token: string; nonce: string };
          resolve();
          return Promise.resolve({ ok: true, status: 200 });
        },
        location: { reload: () => undefined },
        Uint8Array, Math, String, JSON,
      };
      runInNewContext(script, sandbox);
    });
    await done;
    expect(posted).not.toBeNull();
    const result = await challenges.verify({ scope: 'gw', client: '10.0.0.7', token: posted!.token, nonce: posted!.nonce, markUsed });
    expect(result.ok).toBe(true);
  });
});

describe('bodies and headers', () => {
  it('buffers at most the inspection limit and still forwards every byte', async () => {
    const data = Buffer.alloc(200_000, 7);
    const buffered = await bufferHead(Readable.from([data.subarray(0, 50_000), data.subarray(50_000, 120_000), data.subarray(120_000)]), 65_536);
    expect(buffered.complete).toBe(false);
    expect(buffered.head.length).toBeLessThan(200_000);
    const forwarded: Buffer[] = [];
    for await (const chunk of buffered.forward as Readable) forwarded.push(chunk as Buffer);
    expect(Buffer.concat(forwarded).equals(data)).toBe(true);
  });

  it('inspects multipart field names, file names and text parts, not binary file content', () => {
    const body = Buffer.from('--b\r\nContent-Disposition: form-data; name="comment"\r\n\r\n<script>x</script>\r\n--b\r\nContent-Disposition: form-data; name="f"; filename="../../etc/passwd"\r\nContent-Type: image/png\r\n\r\n\u0000\u0001PNGDATA\r\n--b--\r\n');
    const text = inspectableBody(body, 'multipart/form-data; boundary=b')!;
    expect(text).toContain('<script>x</script>');
    expect(text).toContain('filename="../../etc/passwd"');
    expect(text).not.toContain('PNGDATA');
    expect(inspectableBody(Buffer.from([0, 1, 2, 3]), 'application/octet-stream')).toBeUndefined();
  });

  it('keeps an incoming X-Forwarded-For chain only behind a trusted proxy', () => {
    const incoming = { 'x-forwarded-for': '203.0.113.9', host: 'shop.example', te: 'trailers' };
    const context = { remoteAddress: '10.0.0.1', protocol: 'https', host: 'shop.example' };
    expect(requestHeaders(incoming, 'backend:8080', { ...context, trustProxy: false })['x-forwarded-for']).toBe('10.0.0.1');
    const trusted = requestHeaders(incoming, 'backend:8080', { ...context, trustProxy: true });
    expect(trusted['x-forwarded-for']).toBe('203.0.113.9, 10.0.0.1');
    expect(trusted.host).toBe('backend:8080');
    expect(trusted.te).toBeUndefined();
    expect(requestHeaders({}, 'b', { remoteAddress: '::1', protocol: 'http', host: 'h', trustProxy: false }).forwarded).toBe('for="[::1]";proto=http;host="h"');
    expect(responseHeaders({ connection: 'close, x-internal', 'x-internal': '1', 'content-type': 'text/plain', 'transfer-encoding': 'chunked' })).toEqual({ 'content-type': 'text/plain' });
  });

  it("drops a backend's Set-Cookie for svc's own cookie names, whatever their case, and passes its other cookies", () => {
    const planted = ['svc_session=x; Path=/', 'SVC_CSRF=y; Path=/', ' svc_clearance =z', 'cart=3; Path=/', 'svc_session_note=ok'];
    expect(responseHeaders({ 'set-cookie': planted })['set-cookie']).toEqual(['cart=3; Path=/', 'svc_session_note=ok']);
    expect(responseHeaders({ 'set-cookie': ['svc_csrf=y'], 'content-type': 'text/html' })).toEqual({ 'content-type': 'text/html' });
  });
});
