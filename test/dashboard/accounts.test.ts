/**
 * Accounts in the dashboard, in a real browser (Debian chromium, headless), as a team would use
 * them: sign up, turn on two-step verification (TOTP) and sign in with a code, the session
 * restored on reload from its cookie; sign in through OIDC against a real OpenID provider
 * started by the test; invite a viewer who accepts the link and then cannot create a key; a
 * super_admin changes the plan and sees the quotas change. The sign-in's second step and the
 * invitation page pass axe-core (no serious or critical violation) at a phone's width.
 * Codes come from otplib with the secret of the otpauth URI the page shows, as an app's would.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcProvider, type OidcProvider } from '../helpers/identity-providers.ts';
import { hasChromium, openPage, startHarness, visit, type DashboardHarness } from './browser.ts';

// Unique per run: a real PostgreSQL database may outlive one run of the suite.
const EMAIL = `sec-admin-${randomUUID().slice(0, 8)}@example.com`;
const PASSWORD = 'correct horse battery staple';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let harness: DashboardHarness;
let page: Page;
let problems: string[];
let idp: OidcProvider | undefined;

async function seriousViolations(target: Page): Promise<string[]> {
  if (!(await target.evaluate('typeof window.axe !== "undefined"'))) await target.evaluate(axeSource);
  const violations = (await target.evaluate('window.axe.run(document, { resultTypes: ["violations"] }).then((result) => result.violations)')) as Array<{ id: string; impact: string | null; nodes: Array<{ target: string[] }> }>;
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

async function settled(target: Page): Promise<void> {
  await expect.poll(() => target.locator('.state.loading').count(), { timeout: 20_000 }).toBe(0);
}

/** A TOTP code `steps` 30-second steps from now (a later step than one already used is accepted once). */
const codeAt = (secret: string, steps: number) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

describe.skipIf(!hasChromium)('accounts in the dashboard', () => {
  let secret = '';
  let userId = '';
  let orgId = '';

  beforeAll(async () => {
    harness = await startHarness();
    ({ page, problems } = await openPage(harness));
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
    await idp?.close();
  }, 60_000);

  it('signs up, turns on two-step verification with the QR code and recovery codes shown once, and signs in again with a code', async () => {
    await page.goto('/dashboard/');
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Organization name').fill('Two-step org');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();

    await visit(page, 'Your security');
    await settled(page);
    await page.getByRole('button', { name: 'Set up two-step verification' }).click();
    const qr = page.getByRole('img', { name: 'QR code of the authenticator key' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    await expect(page.getByTestId('recovery-codes').locator('li').count()).resolves.toBe(10);
    await page.getByText('Cannot scan? Enter the key by hand').click();
    const uri = await page.getByTestId('otpauth-uri').innerText();
    secret = new URL(uri).searchParams.get('secret') ?? '';
    expect(secret).not.toBe('');
    await page.getByLabel('Code from the app').fill(await codeAt(secret, 0));
    await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
    await page.getByText('Two-step verification is on').waitFor();
    // Shown once: the codes are gone from the page.
    await expect(page.getByTestId('recovery-codes').count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    // A wrong code is refused with svc's code, and the step stays open.
    await page.getByLabel('Authentication code').fill((Number(await codeAt(secret, 1)) ^ 5).toString().padStart(6, '0').slice(-6));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toContain('MFA_CODE_INVALID');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByLabel('Authentication code').fill(await codeAt(secret, 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    // Signed in, back on the page where the user signed out.
    await page.getByRole('heading', { name: 'Your security', level: 1 }).waitFor();
    const who = (await (await page.request.get('/api/v1/auth/session')).json()) as { user: { user_id: string }; org: { id: string }; session: { method: string } };
    expect(who.session.method).toBe('totp');
    userId = who.user.user_id;
    orgId = who.org.id;

    // A reload keeps the session (the cookie), found again through GET /api/v1/auth/session.
    await page.reload();
    await page.getByRole('heading', { name: 'Your security', level: 1 }).waitFor();
    await expect(page.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(true);
    expect(problems).toEqual([]);
  }, 120_000);

  it('invites a viewer whose accepted link signs them in, and who then cannot create a key', async () => {
    await visit(page, 'Users');
    await settled(page);
    const viewerEmail = `viewer-${randomUUID().slice(0, 8)}@example.com`;
    const form = page.getByRole('form', { name: 'Invite a user' });
    await form.getByLabel('E-mail').fill(viewerEmail);
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('button', { name: 'Invite' }).click();
    // No SMTP server configured: the link is shown to the admin, once.
    const link = new URL(await page.getByTestId('accept-url').innerText());
    expect(link.pathname).toBe('/dashboard/accept-invitation');
    await page.getByRole('table', { name: 'Invitations' }).getByText(viewerEmail).waitFor();

    const viewerContext = await harness.browser.newContext({ baseURL: harness.base, viewport: { width: 390, height: 844 } });
    const viewer = await viewerContext.newPage();
    const viewerProblems: string[] = [];
    viewer.on('pageerror', (error) => viewerProblems.push(error.message));
    viewer.on('dialog', (dialog) => void dialog.accept());
    await viewer.goto(`/dashboard/accept-invitation${link.hash}`);
    await viewer.getByRole('heading', { name: 'Join your team on svc' }).waitFor();
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.getByLabel('New password').fill('the viewer password 1');
    await viewer.getByLabel('Repeat the password').fill('the viewer password 1');
    await viewer.getByRole('button', { name: 'Accept the invitation' }).click();
    await viewer.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await expect(viewer.locator('header').innerText()).resolves.toContain('viewer');

    await visit(viewer, 'API keys');
    await settled(viewer);
    await expect(viewer.getByRole('button', { name: 'Create key' }).isDisabled()).resolves.toBe(true);
    // And svc itself refuses the viewer's session, CSRF token and all.
    const refused = (await viewer.evaluate(`(async () => {
      const csrf = document.cookie.split('; ').find((part) => part.startsWith('svc_csrf='))?.slice(9) ?? '';
      const answer = await fetch('/api/v1/keys', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(csrf) }, body: JSON.stringify({ scope: 'read', class: 'live' }) });
      return { status: answer.status, code: (await answer.json()).error.code };
    })()`)) as { status: number; code: string };
    expect(refused).toEqual({ status: 403, code: 'SCOPE_INSUFFICIENT' });
    expect(viewerProblems).toEqual([]);
    await viewerContext.close();

    // The admin sees the invitation accepted and the viewer among the members.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await visit(page, 'Users');
    await settled(page);
    await page.getByRole('table', { name: 'Users' }).getByText(viewerEmail).waitFor();
    await expect(page.getByRole('table', { name: 'Invitations' }).innerText()).resolves.toContain('accepted');
  }, 120_000);

  it('lets a super_admin change the plan and shows the quotas of the new plan', async () => {
    // Made super_admin the way the host's operator does it (what `svc user role` calls): the open session takes the role at once.
    await harness.context.services.accounts.members.changeRole(orgId, 'operator', userId, 'super_admin');
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await visit(page, 'Plan and usage');
    await settled(page);
    const findings = page.getByTestId('quota-Findings this month');
    const before = await findings.innerText();
    await expect(page.getByTestId('plan').innerText()).resolves.toContain('starter');
    await page.getByLabel('New plan').selectOption('enterprise');
    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.getByRole('status').getByText('the plan is now enterprise').waitFor();
    // The label and the quotas come from the organization and usage reads that follow the change;
    // until they answer the page shows what it had (a loaded machine answers them later).
    await expect.poll(() => page.getByTestId('plan').innerText(), { timeout: 15_000 }).toBe('enterprise');
    await expect.poll(() => findings.innerText(), { timeout: 15_000 }).toContain('unlimited');
    const after = await findings.innerText();
    expect(after).not.toBe(before);
    await expect(page.getByText('SAML single sign-on: included').count()).resolves.toBe(1);
    expect(problems).toEqual([]);
  }, 90_000);

  it('signs in through single sign-on at the organization\'s OpenID provider and lands on the dashboard', async () => {
    idp = await startOidcProvider();
    const org = await harness.context.createOrg();
    await idp.register([`${harness.base}/api/v1/auth/oidc/${org.orgId}/callback`]);
    const saved = await fetch(`${harness.base}/api/v1/sso/oidc`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ issuer: idp.issuer, ...idp.client, allowed_domains: ['corp.example'], default_role: 'operator' }),
    });
    expect(saved.status).toBe(200);
    const email = `sso-${randomUUID().slice(0, 8)}@corp.example`;
    idp.loginAs(email);

    const { page: ssoPage, problems: ssoProblems } = await openPage(harness);
    await ssoPage.goto('/dashboard/');
    await ssoPage.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await ssoPage.getByLabel('Organization ID').fill(org.orgId);
    await ssoPage.getByRole('button', { name: 'Continue to your identity provider' }).click();
    await ssoPage.getByRole('heading', { name: 'Overview', level: 1 }).waitFor({ timeout: 30_000 });
    expect(new URL(ssoPage.url()).origin).toBe(harness.base);
    await expect(ssoPage.locator('header').innerText()).resolves.toContain('operator');
    const session = (await (await ssoPage.request.get('/api/v1/auth/session')).json()) as { user: { email: string }; session: { method: string } };
    expect(session).toMatchObject({ user: { email }, session: { method: 'oidc' } });
    expect(ssoProblems).toEqual([]);
    await ssoPage.close();
  }, 120_000);
});
