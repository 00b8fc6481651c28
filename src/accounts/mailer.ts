/**
 * Outgoing e-mail (invitations) over SMTP with nodemailer, to the server of SMTP_URL, from
 * SMTP_FROM. Null when SMTP is not configured: the caller then hands the link over itself
 * (docs/accounts.md). Each message opens its own connection (invitations are rare); the timeouts
 * bound how long an invite request can wait on a slow server.
 */
import { createTransport } from 'nodemailer';
import type { ResolvedConfig } from '../platform/config.ts';

export interface Mailer {
  sendInvitation(message: { to: string; orgName: string; role: string; acceptUrl: string; expiresAt: Date }): Promise<void>;
}

export function createMailer(config: Pick<ResolvedConfig, 'smtp'>): Mailer | null {
  const smtp = config.smtp;
  if (smtp === null) return null;
  const transport = createTransport(smtp.url, { from: smtp.from });
  // Bounded waits: connect, greeting and each socket read (nodemailer's defaults are minutes).
  Object.assign(transport.options, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  return {
    async sendInvitation({ to, orgName, role, acceptUrl, expiresAt }) {
      await transport.sendMail({
        to,
        subject: `You are invited to ${orgName} on svc`,
        text: [
          `You have been invited to join ${orgName} on svc as ${role}.`,
          '',
          `Accept the invitation and choose your password here (the link works once, until ${expiresAt.toISOString()}):`,
          acceptUrl,
          '',
          'If you did not expect this invitation, ignore this message.',
        ].join('\n'),
      });
    },
  };
}
