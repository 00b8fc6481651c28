import { useState, type FormEvent } from 'react';
import { api, ApiError, changePassword } from '../api.ts';
import { Async, ErrorNotice, Page, formatTime, useApi, useIdentity } from '../ui.tsx';

interface SessionView {
  user: { user_id: string; email: string | null; role: string };
  session: { session_id: string; method: string; created_at: string; expires_at: string; idle_expires_at: string };
}

interface Enrolment {
  otpauth_uri: string;
  qr_code: string;
  recovery_codes: string[];
}

const asError = (failure: unknown) => (failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));

/** The signed-in user's own security: the session, two-step verification (TOTP), the password. */
export function Security() {
  const identity = useIdentity();
  const session = useApi<SessionView>(identity.user_id === null ? null : '/api/v1/auth/session');
  if (identity.user_id === null) {
    return (
      <Page title="Your security">
        <p className="state empty">You are signed in with an API key: two-step verification and passwords belong to users. Sign in with your e-mail to manage them.</p>
      </Page>
    );
  }
  return (
    <Page title="Your security" intro="Your sign-in: this session, two-step verification and your password.">
      <Async loaded={session} what="your session">
        {(data) => (
          <dl className="facts">
            <dt>E-mail</dt><dd>{data.user.email ?? '—'}</dd>
            <dt>Role</dt><dd>{data.user.role}</dd>
            <dt>Signed in with</dt><dd>{data.session.method}, {formatTime(data.session.created_at)}</dd>
            <dt>Session ends</dt><dd>{formatTime(data.session.expires_at)} at the latest; {formatTime(data.session.idle_expires_at)} if unused until then</dd>
          </dl>
        )}
      </Async>
      <TwoStep />
      <PasswordChange />
    </Page>
  );
}

function TwoStep() {
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [code, setCode] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      setEnrolment(await api.post<Enrolment>('/api/v1/auth/totp/enroll'));
      setDone(false);
    } catch (failure) {
      setError(asError(failure));
    } finally {
      setBusy(false);
    }
  };

  const confirm = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/v1/auth/totp/confirm', { code: code.trim() });
      setEnrolment(null);
      setCode('');
      setDone(true);
    } catch (failure) {
      setError(asError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h2>Two-step verification</h2>
      {done ? <p className="state" role="status">Two-step verification is on. From now on, sign-in asks for a code from your app after your password.</p> : null}
      {enrolment === null ? (
        <>
          <p>Protect your account with a code from an authenticator app (TOTP) on top of your password. Once it is on, only an admin of your organization can reset it (a lost phone).</p>
          <button type="button" className="primary" disabled={busy} onClick={() => void start()}>Set up two-step verification</button>
        </>
      ) : (
        <div className="secret">
          <p><strong>Scan this code with your authenticator app.</strong> It is shown once.</p>
          <img src={enrolment.qr_code} alt="QR code of the authenticator key" width={200} height={200} />
          <details>
            <summary>Cannot scan? Enter the key by hand</summary>
            <code className="key-text" data-testid="otpauth-uri">{enrolment.otpauth_uri}</code>
          </details>
          <p><strong>Save these recovery codes now: each signs you in once if you lose your phone. They will not be shown again.</strong></p>
          <ul className="recovery-codes" data-testid="recovery-codes">
            {enrolment.recovery_codes.map((recovery) => <li key={recovery}><code>{recovery}</code></li>)}
          </ul>
          <form className="inline-form" onSubmit={(event) => void confirm(event)} aria-label="Confirm two-step verification">
            <label htmlFor="totp-confirm-code">Code from the app</label>
            <input id="totp-confirm-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={code} onChange={(event) => setCode(event.target.value)} />
            <button type="submit" className="primary" disabled={busy}>Turn on two-step verification</button>
          </form>
        </div>
      )}
      {error ? <ErrorNotice error={error} /> : null}
    </>
  );
}

function PasswordChange() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [changed, setChanged] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setChanged(false);
    try {
      await changePassword(current, next);
      setCurrent('');
      setNext('');
      setChanged(true);
    } catch (failure) {
      setError(asError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h2>Password</h2>
      <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label="Change your password">
        <label htmlFor="current-password">Current password</label>
        <input id="current-password" type="password" autoComplete="current-password" required maxLength={256} value={current} onChange={(event) => setCurrent(event.target.value)} />
        <label htmlFor="changed-password">New password (12 characters or more)</label>
        <input id="changed-password" type="password" autoComplete="new-password" required minLength={12} maxLength={256} value={next} onChange={(event) => setNext(event.target.value)} />
        <button type="submit" className="primary" disabled={busy}>Change password</button>
      </form>
      {changed ? <p className="state" role="status">Password changed. Every other session of yours was signed out.</p> : null}
      {error ? <ErrorNotice error={error} /> : null}
    </>
  );
}
