import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { invite, tokenOf } from '../../../../test/support/members.ts'
import { waitFor } from '../../../../test/support/wait.ts'

const { gateway } = useTestGateways()

interface Received {
  readonly from: string
  readonly to: string[]
  readonly user: string | undefined
  readonly raw: string
}

/**
 * A real SMTP server on loopback (the smtp-server package: the protocol, AUTH included, as a mail relay
 * speaks it), which keeps what it is sent. It refuses recipients at refused.example.com.
 */
let smtp: SMTPServer
let port = 0
const received: Received[] = []

beforeAll(async () => {
  smtp = new SMTPServer({
    // Plain SMTP on loopback: no certificate to trust, so no STARTTLS; AUTH over it allowed for the test.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'cas' && auth.password === 's3cret') callback(null, { user: auth.username })
      else callback(new Error('Invalid username or password'))
    },
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith('@refused.example.com')) callback(new Error('No such mailbox'))
      else callback()
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user,
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve))
  port = (smtp.server.address() as AddressInfo).port
})

afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

/** The text body of a message, quoted-printable soft line breaks and escapes undone. */
function textOf(raw: string): string {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4)
  return body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(Number.parseInt(hex, 16)))
}

describe('invitation emails (SMTP_URL)', () => {
  it('sends the invitation, with its link, through the configured SMTP server', async () => {
    // Given a gateway with an SMTP server and a sender configured
    const app = await gateway({
      SMTP_URL: `smtp://cas:s3cret@127.0.0.1:${port}`,
      SMTP_FROM: 'Acme Analytics <invites@acme.test>',
    })
    const owner = await signUp(app, { name: 'Ann', organizationName: 'Acme' })
    const before = received.length

    // When Ann invites Dan as an admin
    const response = await invite(app, owner.cookie, 'dan@example.com', 'admin')

    // Then the answer says it was emailed, and still shows the link
    expect(response.statusCode).toBe(200)
    expect(response.json().emailed).toBe(true)
    const token = tokenOf(response)

    // And the SMTP server got one message, authenticated, from the sender to Dan, carrying the same link
    const mail = await waitFor(() => received[before], { what: 'the invitation email' })
    expect(received).toHaveLength(before + 1)
    expect(mail).toMatchObject({ from: 'invites@acme.test', to: ['dan@example.com'], user: 'cas' })
    expect(mail.raw).toMatch(/^Subject: Ann invited you to Acme on Conversation Analytics\r$/m)
    const text = textOf(mail.raw)
    expect(text).toContain('Ann invited you to join Acme as an admin.')
    expect(text).toContain(response.json().link)
    expect(text).toContain(token)
  })

  it('still answers with the link when the mail server refuses the message', async () => {
    // Given a gateway whose SMTP server refuses the recipient
    const app = await gateway({ SMTP_URL: `smtp://cas:s3cret@127.0.0.1:${port}` })
    const owner = await signUp(app)
    const before = received.length

    // When an invitation to that recipient is made
    const response = await invite(app, owner.cookie, 'dan@refused.example.com', 'member')

    // Then it is made, the link shown, and the answer says it was not emailed
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      emailed: false,
      invitation: { email: 'dan@refused.example.com' },
    })
    expect(tokenOf(response)).toMatch(/\./)
    expect(received).toHaveLength(before)
  })

  it('sends nothing without SMTP_URL', async () => {
    const app = await gateway()
    const owner = await signUp(app)
    const before = received.length
    const response = await invite(app, owner.cookie, 'dan@example.com', 'member')
    expect(response.json().emailed).toBe(false)
    expect(received).toHaveLength(before)
  })
})
