import { api } from '../api.ts';
import { ActionButton, Async, Page, formatTime, useApi } from '../ui.tsx';

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
    </Page>
  );
}
