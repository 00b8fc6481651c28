import { useId, useState, type FormEvent } from 'react';
import type { OrgUsage, Plan } from '../../../src/accounts/org-usage.ts';
import { api, ApiError } from '../api.ts';
import { ActionButton, Async, ErrorNotice, Page, formatTime, useApi, useCan, useIdentity } from '../ui.tsx';

interface Budget {
  day: string;
  daily_token_budget: number;
  tokens_used: number;
  daily_usd_cap: number | null;
  usd_used: number | null;
}

interface Org {
  id: string;
  tag: string;
  name: string;
  plan: string;
  effective_plan: string;
  trial_started_at: string | null;
  trial_ends_at: string | null;
  created_at: string;
}

/** The plans a super_admin may choose, in order; typed by the server's plan names, so a name it no longer knows does not compile. */
const PLANS: readonly Plan[] = ['community', 'starter', 'pro', 'enterprise'];
const WORDS: Record<string, string> = {
  api_security: 'API security', mcp_security: 'MCP security', ai_gateway: 'AI gateway', verification: 'Verification',
  siem_export: 'SIEM export', sso_saml: 'SAML single sign-on',
};

const limitText = (limit: number | null | undefined) => (limit === null || limit === undefined ? 'unlimited' : limit.toLocaleString());

function Quota({ label, used, limit }: { label: string; used: number | null; limit: number | null }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid={`quota-${label}`}>
        {used !== null && limit !== null ? <><meter min={0} max={limit} value={used} aria-label={`${label} used`} />{' '}</> : null}
        {used === null ? `limit ${limitText(limit)} (use not counted yet)` : `${used.toLocaleString()} of ${limitText(limit)}`}
      </dd>
    </>
  );
}

export function Plan() {
  const identity = useIdentity();
  const org = useApi<Org>('/api/v1/org');
  const usage = useApi<OrgUsage>('/api/v1/org/usage');
  const isAdmin = useCan('admin');
  const budget = useApi<Budget>(isAdmin ? '/api/v1/gateway/budget' : null);
  const [error, setError] = useState<ApiError | null>(null);
  const [changed, setChanged] = useState<string | null>(null);
  const planId = useId();
  const superAdmin = identity.role === 'super_admin';

  const changePlan = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const plan = String(new FormData(event.currentTarget).get('plan'));
    setError(null);
    setChanged(null);
    try {
      const answer = await api.put<{ change: string; org: Org }>('/api/v1/org/plan', { plan });
      setChanged(`${answer.change.replace('_', ' ')}: the plan is now ${answer.org.plan}.`);
      org.reload();
      usage.reload();
      budget.reload();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    }
  };

  return (
    <Page title="Plan and usage" intro="Your organization, its plan and trial, and usage against every quota of the plan.">
      <Async loaded={org} what="the organization">
        {(data) => {
          const daysLeft = data.trial_ends_at === null ? null : Math.ceil((Date.parse(data.trial_ends_at) - Date.now()) / 86_400_000);
          return (
            <>
              <dl className="facts">
                <dt>Organization</dt><dd>{data.name} <span className="muted">({data.tag}, ID {data.id})</span></dd>
                <dt>Plan</dt><dd data-testid="plan">{data.plan}{data.effective_plan !== data.plan ? ` (in force: ${data.effective_plan})` : ''}</dd>
                <dt>Trial</dt><dd>{daysLeft === null ? 'none' : daysLeft > 0 ? `${daysLeft} days left (ends ${formatTime(data.trial_ends_at)})` : `ended ${formatTime(data.trial_ends_at)}`}</dd>
                <dt>Created</dt><dd>{formatTime(data.created_at)}</dd>
              </dl>
              {data.trial_ends_at !== null ? (
                <ActionButton needs="admin" onAction={async () => {
                  await api.post('/api/v1/org/trial/extend', { days: 14 });
                  org.reload();
                  usage.reload();
                }}>
                  Extend the trial by 14 days
                </ActionButton>
              ) : null}
              <h2>Change the plan</h2>
              {superAdmin ? (
                <form className="inline-form" onSubmit={(event) => void changePlan(event)} aria-label="Change the plan">
                  <label htmlFor={planId}>New plan</label>
                  <select id={planId} name="plan" defaultValue={data.plan} key={data.plan}>
                    {PLANS.map((plan) => <option key={plan}>{plan}</option>)}
                  </select>
                  <button type="submit" className="primary">Change plan</button>
                  <span className="muted small">No payment is taken here: the plan is what the operator sets.</span>
                </form>
              ) : <p className="muted">Plan changes are made by a super_admin of svc.</p>}
              {changed !== null ? <p className="state" role="status">{changed}</p> : null}
              {error ? <ErrorNotice error={error} /> : null}
            </>
          );
        }}
      </Async>
      <h2>Quotas</h2>
      <Async loaded={usage} what="usage">
        {(data) => (
          <>
            <dl className="facts" aria-label="Quotas">
              <Quota label="Findings this month" used={data.findings.used} limit={data.findings.limit} />
              {data.findings.over_quota ? <><dt>Over quota</dt><dd>attacks are still blocked and recorded; {data.findings.dropped.toLocaleString()} log-band findings dropped</dd></> : null}
              <Quota label="Sensors" used={data.sensors.used} limit={data.sensors.limit} />
              <dt>Requests</dt>
              <dd data-testid="quota-Requests">{limitText(data.rate.requests_per_minute)} a minute (burst {limitText(data.rate.burst)}), {limitText(data.rate.requests_per_day)} a day, {limitText(data.rate.concurrent)} at once</dd>
              <dt>AI gateway tokens a day</dt><dd data-testid="quota-Daily tokens">{limitText(data.daily_tokens.limit)}</dd>
              <dt>Period</dt><dd>{formatTime(data.period.start)} to {formatTime(data.period.end)}</dd>
            </dl>
            <h3>Included</h3>
            <ul className="included">
              {Object.entries({ ...data.pillars, ...data.features }).map(([name, on]) => (
                <li key={name}>{WORDS[name] ?? name}: <strong>{on ? 'included' : 'not included'}</strong></li>
              ))}
            </ul>
          </>
        )}
      </Async>
      <h2>AI gateway usage today</h2>
      {isAdmin ? (
        <Async loaded={budget} what="usage">
          {(data) => (
            <dl className="facts">
              <dt>AI gateway tokens</dt>
              <dd>
                <meter min={0} max={data.daily_token_budget} value={data.tokens_used} aria-label="Daily tokens used" /> {data.tokens_used.toLocaleString()} of {data.daily_token_budget.toLocaleString()} ({data.day}, UTC)
              </dd>
              <dt>AI gateway spend</dt>
              <dd>{data.usd_used === null ? 'not tracked' : `$${data.usd_used.toFixed(4)}`}{data.daily_usd_cap === null ? ', no cap' : ` of a $${data.daily_usd_cap} cap`}</dd>
            </dl>
          )}
        </Async>
      ) : <p className="muted">Today's AI-gateway spend is shown to admins.</p>}
    </Page>
  );
}
