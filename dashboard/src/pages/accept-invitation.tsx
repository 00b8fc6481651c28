import { useState, type FormEvent } from 'react';
import { acceptInvitation, ApiError, type Identity } from '../api.ts';

function explain(error: ApiError): string {
  switch (error.code) {
    case 'INVITATION_EXPIRED': return 'This invitation has expired: ask your administrator for a new one.';
    case 'INVITATION_USED': return 'This invitation was used already: sign in instead.';
    case 'INVITATION_INVALID': return 'This invitation link is not valid (altered, withdrawn or replaced): ask your administrator for a new one.';
    case 'EMAIL_TAKEN': return 'An account with this e-mail exists already: sign in instead.';
    case 'LOGIN_BLOCKED': case 'RATE_LIMITED': return 'Too many attempts: wait a minute and try again.';
    default: return error.message;
  }
}

/**
 * The page an invitation link opens (`/dashboard/accept-invitation#token=…`): choose a password
 * and join the organization, signed in. The token stays in the fragment, which is never sent to
 * a server, and is posted once to `POST /api/v1/auth/invitations/accept`.
 */
export function AcceptInvitation({ onSignedIn }: { onSignedIn: (identity: Identity) => void }) {
  const invitationToken = new URLSearchParams(window.location.hash.slice(1)).get('token');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (invitationToken === null) return;
    if (password !== repeat) {
      setError(new ApiError(0, 'PASSWORDS_DIFFER', 'The two passwords differ.', null));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const identity = await acceptInvitation(invitationToken, password);
      onSignedIn(identity);
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="centered">
      <form className="sign-in" onSubmit={(event) => void submit(event)} aria-labelledby="accept-title">
        <h1 id="accept-title">Join your team on svc</h1>
        {invitationToken === null ? (
          <p className="state error" role="alert">This link has no invitation in it. Open the whole link from your invitation.</p>
        ) : (
          <>
            <p>Choose a password (12 characters or more) to accept the invitation. You are signed in when it is accepted.</p>
            <label htmlFor="new-password">New password</label>
            <input id="new-password" type="password" autoComplete="new-password" required minLength={12} maxLength={256} value={password} onChange={(event) => setPassword(event.target.value)} />
            <label htmlFor="repeat-password">Repeat the password</label>
            <input id="repeat-password" type="password" autoComplete="new-password" required minLength={12} maxLength={256} value={repeat} onChange={(event) => setRepeat(event.target.value)} />
            {error ? (
              <p className="state error" role="alert">
                {explain(error)} <span className="muted">({error.code})</span>
              </p>
            ) : null}
            <button type="submit" className="primary" disabled={busy}>{busy ? 'Please wait…' : 'Accept the invitation'}</button>
          </>
        )}
        <p><a href="/dashboard/">Sign in instead</a></p>
      </form>
    </main>
  );
}
