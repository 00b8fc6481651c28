import { useState, type FormEvent } from 'react';
import { ApiError, signIn, signInSecondStep, signUp, singleSignOnUrl, type Identity, type MfaChallenge } from '../api.ts';

type Mode = 'in' | 'up' | 'second-step' | 'sso';

const TITLES: Record<Mode, string> = {
  in: 'Sign in to svc',
  up: 'Create an account',
  'second-step': 'Two-step verification',
  sso: 'Sign in with single sign-on',
};

function explain(error: ApiError): string {
  switch (error.code) {
    case 'LOGIN_FAILED': return 'The e-mail or password is not right.';
    case 'MFA_CODE_INVALID': return 'That code is not right, or was used already. Try the next code from your app.';
    case 'MFA_LOCKED': return 'Too many wrong codes: the second step is locked for 15 minutes.';
    case 'MFA_TOKEN_INVALID': return 'This sign-in took too long: start again with your e-mail and password.';
    case 'LOGIN_BLOCKED': case 'REGISTER_BLOCKED': case 'RATE_LIMITED': return 'Too many attempts: wait a minute and try again.';
    case 'CONFLICT': return 'An account with this e-mail exists: sign in instead.';
    default: return error.message;
  }
}

/**
 * E-mail and password sign-in with the TOTP second step (a code or a recovery code), single
 * sign-on (OIDC), and sign-up (a new organization with its first admin).
 */
export function SignIn({ onSignedIn }: { onSignedIn: (identity: Identity) => void }) {
  const [mode, setMode] = useState<Mode>('in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [orgName, setOrgName] = useState('');
  const [challenge, setChallenge] = useState<MfaChallenge | null>(null);
  const [useRecovery, setUseRecovery] = useState(false);
  const [code, setCode] = useState('');
  const [orgId, setOrgId] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const switchTo = (next: Mode) => {
    setMode(next);
    setError(null);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (mode === 'sso') {
      window.location.assign(singleSignOnUrl(orgId.trim()));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      if (mode === 'second-step' && challenge !== null) {
        onSignedIn(await signInSecondStep(challenge.mfa_token, useRecovery ? { recovery_code: code.trim() } : { code: code.trim() }));
      } else if (mode === 'up') {
        onSignedIn(await signUp(email, password, orgName));
      } else {
        const answer = await signIn(email, password);
        if ('mfa_required' in answer) {
          setChallenge(answer);
          setCode('');
          setPassword('');
          setMode('second-step');
        } else {
          onSignedIn(answer);
        }
      }
    } catch (failure) {
      const problem = failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null);
      setError(problem);
      if (mode === 'second-step' && problem.code === 'MFA_TOKEN_INVALID') {
        setChallenge(null);
        setMode('in');
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="centered">
      <form className="sign-in" onSubmit={(event) => void submit(event)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">{TITLES[mode]}</h1>
        {mode === 'in' || mode === 'up' ? (
          <>
            <label htmlFor="email">E-mail</label>
            <input id="email" type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
            <label htmlFor="password">Password</label>
            <input id="password" type="password" autoComplete={mode === 'in' ? 'current-password' : 'new-password'} required minLength={mode === 'up' ? 12 : undefined} value={password} onChange={(event) => setPassword(event.target.value)} />
          </>
        ) : null}
        {mode === 'up' ? (
          <>
            <label htmlFor="org-name">Organization name</label>
            <input id="org-name" required maxLength={200} value={orgName} onChange={(event) => setOrgName(event.target.value)} />
          </>
        ) : null}
        {mode === 'second-step' ? (
          <>
            <p>{useRecovery ? 'Enter one of the recovery codes you saved when you set up two-step verification. Each works once.' : 'Enter the 6-digit code from your authenticator app.'}</p>
            <label htmlFor="second-step-code">{useRecovery ? 'Recovery code' : 'Authentication code'}</label>
            {useRecovery ? (
              <input id="second-step-code" autoComplete="off" required maxLength={64} value={code} onChange={(event) => setCode(event.target.value)} />
            ) : (
              <input id="second-step-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required maxLength={6} value={code} onChange={(event) => setCode(event.target.value)} />
            )}
          </>
        ) : null}
        {mode === 'sso' ? (
          <>
            <p>Your administrator gives you your organization's ID; you then sign in at your identity provider.</p>
            <label htmlFor="sso-org">Organization ID</label>
            <input id="sso-org" required pattern="[0-9a-fA-F\-]{36}" title="the organization ID, e.g. 0b1c…-…" autoComplete="organization" value={orgId} onChange={(event) => setOrgId(event.target.value)} />
          </>
        ) : null}
        {error ? (
          <p className="state error" role="alert">
            {explain(error)} <span className="muted">({error.code})</span>
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Please wait…' : mode === 'in' ? 'Sign in' : mode === 'up' ? 'Create account' : mode === 'second-step' ? 'Verify' : 'Continue to your identity provider'}
        </button>
        {mode === 'second-step' ? (
          <p>
            <button type="button" className="link" onClick={() => {
              setUseRecovery(!useRecovery);
              setCode('');
              setError(null);
            }}>
              {useRecovery ? 'Use a code from the app' : 'Use a recovery code'}
            </button>
          </p>
        ) : null}
        {mode === 'in' ? (
          <p>
            <button type="button" className="link" onClick={() => switchTo('sso')}>Sign in with single sign-on</button>
          </p>
        ) : null}
        <p>
          {mode === 'in' ? 'No account yet? ' : mode === 'up' ? 'Have an account? ' : ''}
          <button type="button" className="link" onClick={() => {
            setChallenge(null);
            switchTo(mode === 'in' ? 'up' : 'in');
          }}>
            {mode === 'in' ? 'Create one' : mode === 'up' ? 'Sign in' : 'Back to e-mail and password'}
          </button>
        </p>
      </form>
    </main>
  );
}
