import type { OrganizationRole } from '@cas/events'
import nodemailer from 'nodemailer'

export interface InvitationMail {
  readonly to: string
  readonly organizationName: string
  readonly inviterName: string
  readonly role: OrganizationRole
  readonly link: string
  readonly expiresAt: Date
}

export interface InvitationMailer {
  send(mail: InvitationMail): Promise<void>
  close(): void
}

/**
 * Sends invitation emails through the SMTP server of `smtpUrl` with nodemailer (the maintained standard
 * for SMTP in Node: STARTTLS, authentication and message encoding done right). Timeouts are short: the
 * inviter waits for the answer, and the link is shown to them anyway.
 */
export function createInvitationMailer(smtpUrl: string, from: string): InvitationMailer {
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 15_000,
  })
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, ...invitationMessage(mail) })
    },
    close() {
      transport.close()
    },
  }
}

/** The subject and text of an invitation email. */
export function invitationMessage(mail: InvitationMail): { subject: string; text: string } {
  const article = mail.role === 'admin' || mail.role === 'owner' ? 'an' : 'a'
  return {
    subject: `${mail.inviterName} invited you to ${mail.organizationName} on Conversation Analytics`,
    text: [
      `${mail.inviterName} invited you to join ${mail.organizationName} as ${article} ${mail.role}.`,
      '',
      'Open this link to accept (it works once, and only until ' +
        `${mail.expiresAt.toISOString().replace('T', ' ').slice(0, 16)} UTC):`,
      '',
      mail.link,
      '',
      "If you weren't expecting this invitation, you can ignore this email.",
    ].join('\n'),
  }
}
