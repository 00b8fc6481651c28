/**
 * `svc serve --role collector` (ROLE=collector; docs/sensors-operations.md, "Roles"): the collector
 * serves svc's API, the dashboard and the sensors (their wire on the mutual-TLS listener), and
 * refuses the pillars' end-user traffic, which that pillar's sensors serve (`svc sensor --class
 * gateway|mcp|verification`). Everything an org configures — gateways, MCP servers, policies,
 * provider keys, threats, audit — stays here: the sensors pull their configuration from it.
 */
import type { FastifyRequest } from 'fastify';
import { SvcError } from '../platform/errors.ts';

/** The pillar whose end-user traffic this path is, or null for svc's own API. */
export function trafficPillar(method: string, path: string): 'api' | 'mcp' | 'gateway' | 'verification' | null {
  if (path === '/gw' || path.startsWith('/gw/')) return 'api';
  if (path.startsWith('/mcp/')) return 'mcp';
  // The Challenge band's verify route is the completions' companion: the sensor that issued the
  // puzzle (and answers the retry) verifies it.
  if (path === '/api/v1/gateway/completions' || path === '/api/v1/gateway/challenge' || path.startsWith('/v1/')) return 'gateway';
  if (method === 'POST' && path === '/api/v1/verify') return 'verification';
  return null;
}

/** The path with its percent-escapes decoded, as the router matches it (the raw path when malformed). */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * onRequest hook of the collector role: ROLE_NOT_SERVED for a pillar's traffic. The route the
 * router matched decides, then the decoded path: the router decodes percent-escapes, so the raw
 * text alone (`/v1/chat/complet%69ons`, `/%6dcp/{id}`) would let a pillar's route through.
 */
export async function refuseSensorTraffic(request: FastifyRequest): Promise<void> {
  const url = request.url;
  const index = url.indexOf('?');
  const path = index < 0 ? url : url.slice(0, index);
  const route = request.routeOptions.url;
  const pillar = (route === undefined ? null : trafficPillar(request.method, route)) ?? trafficPillar(request.method, decodedPath(path)) ?? trafficPillar(request.method, path);
  if (pillar !== null) throw new SvcError('ROLE_NOT_SERVED', { details: { role: 'collector', pillar } });
}
