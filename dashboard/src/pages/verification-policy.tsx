import { api } from '../api.ts';
import { Async, JsonEditor, Page, formatTime, useApi, useCan } from '../ui.tsx';

interface PolicyAnswer {
  policy: Record<string, unknown>;
  updated_at: string | null;
  inactive_rules: Array<{ layer: string; rule: string; inactive_reason: string }>;
}

export function VerificationPolicy() {
  const isAdmin = useCan('admin');
  const policy = useApi<PolicyAnswer>(isAdmin ? '/api/v1/config/verification' : null);
  return (
    <Page title="Verification policy" needs="admin" intro="How AI responses are checked: integrity, grounding, structural and constraint layers, and what happens when a check fails (docs/verification.md).">
      {!isAdmin ? <p className="state empty">The verification policy is readable by admins only.</p> : (
        <Async loaded={policy} what="the verification policy">
          {(data) => (
            <>
              <p className="muted">Last changed {formatTime(data.updated_at)}.</p>
              {data.inactive_rules.length > 0 ? (
                <div className="state error" role="alert">
                  <p>Rules that are stored but skipped:</p>
                  <ul>{data.inactive_rules.map((rule) => <li key={`${rule.layer}:${rule.rule}`}>{rule.layer} {rule.rule}: {rule.inactive_reason}</li>)}</ul>
                </div>
              ) : null}
              <JsonEditor label="Policy (JSON)" needs="admin" value={data.policy} onSave={async (value) => {
                await api.put('/api/v1/config/verification', value);
                policy.reload();
              }} />
            </>
          )}
        </Async>
      )}
    </Page>
  );
}
