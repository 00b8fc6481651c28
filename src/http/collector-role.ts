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
  if (path === '/api/v1/gateway/completions' || path.startsWith('/v1/')) return 'gateway';
  if (method === 'POST' && path === '/api/v1/verify') return 'verification';
  return null;
}

/** onRequest hook of the collector role: ROLE_NOT_SERVED for a pillar's traffic. */
export async function refuseSensorTraffic(request: FastifyRequest): Promise<void> {
  const url = request.url;
  const index = url.indexOf('?');
  const pillar = trafficPillar(request.method, index < 0 ? url : url.slice(0, index));
  if (pillar !== null) throw new SvcError('ROLE_NOT_SERVED', { details: { role: 'collector', pillar } });
}
