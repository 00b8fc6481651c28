/**
 * The shell: sign-in until there is a session, then the navigation and the pages.
 */
import { useEffect, useState } from 'react';
import { Navigate, NavLink, Route, Routes, useLocation, useNavigate } from 'react-router';
import { onSignedOut, resume, signOut, type Identity } from './api.ts';
import { IdentityContext, Loading } from './ui.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { Overview } from './pages/overview.tsx';
import { Threats } from './pages/threats.tsx';
import { ApiKeys } from './pages/api-keys.tsx';
import { Webhooks } from './pages/webhooks.tsx';
import { Mcp } from './pages/mcp.tsx';
import { AiGateway } from './pages/ai-gateway.tsx';
import { ApiSecurity } from './pages/api-security.tsx';
import { Audit } from './pages/audit.tsx';
import { VerificationPolicy } from './pages/verification-policy.tsx';
import { Settings } from './pages/settings.tsx';
import { Plan } from './pages/plan.tsx';
import { AcceptInvitation } from './pages/accept-invitation.tsx';
import { Security } from './pages/security.tsx';
import { Users } from './pages/users.tsx';

const PAGES = [
  { path: 'overview', title: 'Overview', element: <Overview /> },
  { path: 'threats', title: 'Threats', element: <Threats /> },
  { path: 'api-security', title: 'API security', element: <ApiSecurity /> },
  { path: 'mcp', title: 'MCP', element: <Mcp /> },
  { path: 'ai-gateway', title: 'AI gateway', element: <AiGateway /> },
  { path: 'verification', title: 'Verification policy', element: <VerificationPolicy /> },
  { path: 'webhooks', title: 'Webhooks', element: <Webhooks /> },
  { path: 'audit', title: 'Audit', element: <Audit /> },
  { path: 'keys', title: 'API keys', element: <ApiKeys /> },
  { path: 'users', title: 'Users', element: <Users /> },
  { path: 'plan', title: 'Plan and usage', element: <Plan /> },
  { path: 'security', title: 'Your security', element: <Security /> },
  { path: 'settings', title: 'Settings', element: <Settings /> },
];

export function App() {
  const [identity, setIdentity] = useState<Identity | null | undefined>(undefined);
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  const navigate = useNavigate();

  useEffect(() => {
    let live = true;
    resume().then(
      (found) => live && setIdentity(found),
      () => live && setIdentity(null),
    );
    const stop = onSignedOut(() => setIdentity(null));
    return () => {
      live = false;
      stop();
    };
  }, []);

  useEffect(() => {
    setMenuOpen(false);
    document.getElementById('page-title')?.focus();
  }, [location.pathname]);

  if (identity === undefined) return <main className="centered"><Loading what="your session" /></main>;
  if (location.pathname === '/accept-invitation') {
    return <AcceptInvitation onSignedIn={(signedIn) => {
      setIdentity(signedIn);
      void navigate('/overview', { replace: true });
    }} />;
  }
  if (identity === null) return <SignIn onSignedIn={setIdentity} />;

  return (
    <IdentityContext.Provider value={identity}>
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">svc</span>
        <button type="button" className="menu-toggle" aria-expanded={menuOpen} aria-controls="navigation" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <span className="who">
          <span className="muted">{identity.role ?? identity.scope}</span> · org {identity.org_tag} · {identity.plan}
        </span>
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      <div className="layout">
        <nav id="navigation" aria-label="Dashboard" className={menuOpen ? 'open' : ''}>
          <ul>
            {PAGES.map((page) => (
              <li key={page.path}>
                <NavLink to={`/${page.path}`}>{page.title}</NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">
          <Routes>
            <Route index element={<Navigate to="/overview" replace />} />
            {PAGES.map((page) => (
              <Route key={page.path} path={`/${page.path}`} element={page.element} />
            ))}
            <Route path="*" element={<NotFound />} />
          </Routes>
        </main>
      </div>
    </IdentityContext.Provider>
  );
}

function NotFound() {
  return (
    <section className="page">
      <h1 id="page-title" tabIndex={-1}>Page not found</h1>
      <p>
        This dashboard has no such page. <NavLink to="/overview">Go to the overview</NavLink>.
      </p>
    </section>
  );
}
