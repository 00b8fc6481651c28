import { api } from '../api.ts';
import { ActionButton, Async, Page, formatTime, useApi, useCan } from '../ui.tsx';

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

export function Plan() {
  const org = useApi<Org>('/api/v1/org');
  const isAdmin = useCan('admin');
  const budget = useApi<Budget>(isAdmin ? '/api/v1/gateway/budget' : null);
  return (
    <Page title="Plan and usage" intro="Your organization, its plan and trial.">
      <Async loaded={org} what="the organization">
        {(data) => {
          const daysLeft = data.trial_ends_at === null ? null : Math.ceil((Date.parse(data.trial_ends_at) - Date.now()) / 86_400_000);
          return (
            <>
              <dl className="facts">
                <dt>Organization</dt><dd>{data.name} <span className="muted">({data.tag})</span></dd>
                <dt>Plan</dt><dd>{data.plan}{data.effective_plan !== data.plan ? ` (in force: ${data.effective_plan})` : ''}</dd>
                <dt>Trial</dt><dd>{daysLeft === null ? 'none' : daysLeft > 0 ? `${daysLeft} days left (ends ${formatTime(data.trial_ends_at)})` : `ended ${formatTime(data.trial_ends_at)}`}</dd>
                <dt>Created</dt><dd>{formatTime(data.created_at)}</dd>
              </dl>
              {data.trial_ends_at !== null ? (
                <ActionButton needs="admin" onAction={async () => {
                  await api.post('/api/v1/org/trial/extend', { days: 14 });
                  org.reload();
                }}>
                  Extend the trial by 14 days
                </ActionButton>
              ) : null}
            </>
          );
        }}
      </Async>
      <h2>Usage today</h2>
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
      ) : <p className="muted">Usage against quotas is shown to admins.</p>}
    </Page>
  );
}
