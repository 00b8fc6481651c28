/**
 * Serves the dashboard (dashboard/, a React + Vite single-page app built by `npm run build` into
 * dist/dashboard) at /dashboard, from this same server:
 * - /dashboard/assets/<hashed file>: cached for a year (immutable; a new build has new names);
 * - any other path under /dashboard: index.html, never cached, so client routes survive a
 *   reload and a new build is picked up at once;
 * - `/`: a redirect to /dashboard/ (a browser that opens svc's address lands on the sign-in);
 *   unknown paths elsewhere, /api/… included, keep answering the JSON error envelope.
 * Every dashboard answer carries a Content-Security-Policy that fits a Vite build (scripts and
 * styles only from this origin, no inline script, no framing) and the usual hardening headers.
 * The files are static: the routes take the operations rate limit (per IP, no credential
 * parsing); the dashboard's data comes from the public API with the signed-in user's session.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import { SvcError } from '../platform/errors.ts';
import type { AppInstance } from '../platform/http-plugin.ts';

/** dist/dashboard of the package, whether this module runs from src/ (tsx) or dist/ (compiled). */
export const DASHBOARD_ROOT = fileURLToPath(new URL('../../dist/dashboard/', import.meta.url));

export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const ASSET = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

function harden(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', DASHBOARD_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cross-Origin-Opener-Policy', 'same-origin');
}

export async function registerDashboard(app: AppInstance, root: string = DASHBOARD_ROOT): Promise<void> {
  const built = existsSync(`${root}index.html`);
  const config = { operations: true };
  const schema = { hide: true };

  app.get('/', { config, schema }, async (_request, reply) => reply.redirect('/dashboard/', 302));
  app.get('/dashboard', { config, schema }, async (_request, reply) => reply.redirect('/dashboard/', 301));

  await app.register(async (scope) => {
    if (built) await scope.register(fastifyStatic, { root, serve: false, index: false });

    const page = async (_request: unknown, reply: FastifyReply) => {
      harden(reply).header('Cache-Control', 'no-cache');
      if (!built) {
        return reply
          .code(503)
          .type('text/html; charset=utf-8')
          .send('<!doctype html><html lang="en"><title>svc dashboard</title><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> and restart svc. The API works without it (<a href="/docs">/docs</a>).</p></html>');
      }
      return reply.sendFile('index.html', { cacheControl: false });
    };

    scope.get('/dashboard/', { config, schema }, page);
    scope.get('/dashboard/*', { config, schema }, async (request, reply) => {
      const rest = (request.params as { '*': string })['*'];
      // A missing file of the build is a 404, not the page (a stale tab asking for an old chunk).
      if (rest.startsWith('assets/')) {
        const name = rest.slice('assets/'.length);
        if (!built || !ASSET.test(name) || !existsSync(`${root}assets/${name}`)) {
          throw new SvcError('ROUTE_NOT_FOUND', { details: { method: request.method, path: `/dashboard/${rest}`.slice(0, 512) } });
        }
        harden(reply).header('Cache-Control', 'public, max-age=31536000, immutable');
        return reply.sendFile(`assets/${name}`, { cacheControl: false });
      }
      return page(request, reply);
    });
  });
}
