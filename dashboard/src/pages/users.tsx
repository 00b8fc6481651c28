import { useId, useState, type FormEvent } from 'react';
import { api, ApiError } from '../api.ts';
import { ActionButton, Async, Badge, ErrorNotice, Page, formatTime, useApi, useCan, useIdentity } from '../ui.tsx';

interface User {
  user_id: string;
  email: string;
  role: string;
  created_at: string;
  last_login_at: string | null;
}

interface Invitation {
  invitation_id: string;
  email: string;
  role: string;
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
  created_at: string;
  expires_at: string;
}

interface Invited extends Invitation {
  delivery: 'sent' | 'not_configured';
  accept_url: string | null;
}

const ROLES = ['viewer', 'operator', 'admin', 'super_admin'] as const;

/**
 * The org's users and invitations: invite by e-mail with a role (the link is shown once when svc
 * has no SMTP server), change a role, remove a user, revoke an invitation. Granting or touching
 * super_admin is for super_admins; svc refuses the rest with ROLE_INSUFFICIENT or LAST_ADMIN.
 */
export function Users() {
  const identity = useIdentity();
  const isAdmin = useCan('admin');
  const users = useApi<{ data: User[] }>('/api/v1/users');
  const invitations = useApi<{ data: Invitation[] }>(isAdmin ? '/api/v1/users/invitations' : null);
  const [invited, setInvited] = useState<Invited | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const emailId = useId();
  const roleId = useId();
  const roles = identity.role === 'super_admin' ? ROLES : ROLES.filter((role) => role !== 'super_admin');

  const invite = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const target = event.currentTarget;
    setError(null);
    try {
      setInvited(await api.post<Invited>('/api/v1/users/invitations', { email: String(form.get('email') ?? '').trim(), role: form.get('role') }));
      target.reset();
      invitations.reload();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    }
  };

  const changeRole = async (user: User, role: string) => {
    setError(null);
    try {
      await api.patch(`/api/v1/users/${user.user_id}`, { role });
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    }
    users.reload();
  };

  return (
    <Page title="Users" needs="admin" intro="People who sign in to this organization, and invitations waiting to be accepted.">
      {invited !== null ? (
        <div className="secret" role="status" aria-live="polite">
          {invited.accept_url !== null ? (
            <>
              <p><strong>svc has no mail server configured: give {invited.email} this link yourself.</strong> It is shown once and works once, until {formatTime(invited.expires_at)}.</p>
              <code className="key-text" data-testid="accept-url">{invited.accept_url}</code>
              <p><button type="button" onClick={() => void navigator.clipboard?.writeText(invited.accept_url ?? '')}>Copy</button>{' '}
                <button type="button" onClick={() => setInvited(null)}>Done</button></p>
            </>
          ) : (
            <p>An invitation was e-mailed to {invited.email}. <button type="button" onClick={() => setInvited(null)}>Done</button></p>
          )}
        </div>
      ) : null}
      <form className="inline-form" onSubmit={(event) => void invite(event)} aria-label="Invite a user">
        <label htmlFor={emailId}>E-mail</label>
        <input id={emailId} name="email" type="email" required maxLength={320} disabled={!isAdmin} />
        <label htmlFor={roleId}>Role</label>
        <select id={roleId} name="role" defaultValue="viewer" disabled={!isAdmin}>
          {roles.map((role) => <option key={role}>{role}</option>)}
        </select>
        <button type="submit" className="primary" disabled={!isAdmin}>Invite</button>
        {isAdmin ? null : <span className="muted small">inviting needs the admin role</span>}
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      <h2>Members</h2>
      <Async loaded={users} what="users" isEmpty={(data) => data.data.length === 0} empty="No users yet: invite one above.">
        {(data) => (
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">Users</caption>
            <thead>
              <tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col">Last sign-in</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {data.data.map((user) => (
                <tr key={user.user_id}>
                  <td>{user.email}{user.user_id === identity.user_id ? <span className="muted"> (you)</span> : null}</td>
                  <td>
                    <select aria-label={`Role of ${user.email}`} value={user.role} disabled={!isAdmin || (user.role === 'super_admin' && identity.role !== 'super_admin')}
                      onChange={(event) => void changeRole(user, event.target.value)}>
                      {(user.role === 'super_admin' ? ROLES : roles).map((role) => <option key={role}>{role}</option>)}
                    </select>
                  </td>
                  <td>{formatTime(user.created_at)}</td>
                  <td>{formatTime(user.last_login_at)}</td>
                  <td>
                    <ActionButton needs="admin" kind="danger" confirm={`Remove ${user.email}? Their sessions end at once; keys they created stay.`} onAction={async () => {
                      await api.delete(`/api/v1/users/${user.user_id}`);
                      users.reload();
                    }}>
                      Remove
                    </ActionButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Async>
      {isAdmin ? (
        <>
          <h2>Invitations</h2>
          <Async loaded={invitations} what="invitations" isEmpty={(data) => data.data.length === 0} empty="No invitations yet.">
            {(data) => (
              <table className="list" tabIndex={0}>
                <caption className="visually-hidden">Invitations</caption>
                <thead>
                  <tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Expires</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
                </thead>
                <tbody>
                  {data.data.map((invitation) => (
                    <tr key={invitation.invitation_id}>
                      <td>{invitation.email}</td>
                      <td>{invitation.role}</td>
                      <td><Badge tone={invitation.status === 'pending' ? 'alert' : invitation.status === 'accepted' ? 'ok' : undefined}>{invitation.status}</Badge></td>
                      <td>{formatTime(invitation.expires_at)}</td>
                      <td>
                        {invitation.status === 'pending' ? (
                          <ActionButton needs="admin" kind="danger" confirm={`Withdraw the invitation of ${invitation.email}?`} onAction={async () => {
                            await api.delete(`/api/v1/users/invitations/${invitation.invitation_id}`);
                            invitations.reload();
                          }}>
                            Withdraw
                          </ActionButton>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Async>
        </>
      ) : null}
    </Page>
  );
}
