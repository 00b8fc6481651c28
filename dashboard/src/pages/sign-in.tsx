import { useState, type FormEvent } from 'react';
import { ApiError, signIn, signUp, type Identity } from '../api.ts';

/** E-mail and password sign-in, and sign-up (a new organization with its first admin). */
export function SignIn({ onSignedIn }: { onSignedIn: (identity: Identity) => void }) {
  const [mode, setMode] = useState<'in' | 'up'>('in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [orgName, setOrgName] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(mode === 'in' ? await signIn(email, password) : await signUp(email, password, orgName));
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    } finally {
      setBusy(false);
    }
  };

  const hint = error === null ? null
    : error.code === 'LOGIN_FAILED' ? 'The e-mail or password is not right.'
    : error.code === 'LOGIN_BLOCKED' || error.code === 'REGISTER_BLOCKED' || error.code === 'RATE_LIMITED' ? 'Too many attempts: wait a minute and try again.'
    : error.code === 'CONFLICT' ? 'An account with this e-mail exists: sign in instead.'
    : error.message;

  return (
    <main className="centered">
      <form className="sign-in" onSubmit={(event) => void submit(event)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">{mode === 'in' ? 'Sign in to svc' : 'Create an account'}</h1>
        <label htmlFor="email">E-mail</label>
        <input id="email" type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        <label htmlFor="password">Password</label>
        <input id="password" type="password" autoComplete={mode === 'in' ? 'current-password' : 'new-password'} required minLength={mode === 'up' ? 12 : undefined} value={password} onChange={(event) => setPassword(event.target.value)} />
        {mode === 'up' ? (
          <>
            <label htmlFor="org-name">Organization name</label>
            <input id="org-name" required maxLength={200} value={orgName} onChange={(event) => setOrgName(event.target.value)} />
          </>
        ) : null}
        {error ? (
          <p className="state error" role="alert">
            {hint} <span className="muted">({error.code})</span>
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Please wait…' : mode === 'in' ? 'Sign in' : 'Create account'}
        </button>
        <p>
          {mode === 'in' ? 'No account yet? ' : 'Have an account? '}
          <button type="button" className="link" onClick={() => {
            setMode(mode === 'in' ? 'up' : 'in');
            setError(null);
          }}>
            {mode === 'in' ? 'Create one' : 'Sign in'}
          </button>
        </p>
      </form>
    </main>
  );
}
