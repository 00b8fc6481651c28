-- API security: protected gateways (reverse-proxy configuration per org) and geo-blocking rules.
-- Org-scoped with row-level security; the proxy resolves a gateway by id or hostname as the
-- owner role (traffic carries no svc credential), every management call goes through withOrg.

CREATE TABLE apisec_gateways (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  name text NOT NULL,
  backend_url text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('monitor', 'block')),
  hostname text,
  path_prefix text,
  openapi jsonb,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX apisec_gateways_org ON apisec_gateways (org_id, created_at);
-- One gateway per (hostname, path prefix) across all orgs: the router must be unambiguous.
CREATE UNIQUE INDEX apisec_gateways_route ON apisec_gateways (coalesce(hostname, ''), coalesce(path_prefix, ''))
  WHERE hostname IS NOT NULL OR path_prefix IS NOT NULL;
SELECT svc_enable_rls('apisec_gateways');

CREATE TABLE apisec_geo_rules (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  gateway_id uuid REFERENCES apisec_gateways(id) ON DELETE CASCADE,
  rule_name text NOT NULL,
  action text NOT NULL CHECK (action IN ('block')),
  countries jsonb NOT NULL,
  response_code integer NOT NULL CHECK (response_code BETWEEN 400 AND 599),
  log boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX apisec_geo_rules_org ON apisec_geo_rules (org_id, created_at);
SELECT svc_enable_rls('apisec_geo_rules');
