import { type FormEvent, useEffect, useRef, useState } from 'react'
import { invitations } from '../api/endpoints.ts'
import type { Invitation, Invited, Role } from '../api/types.ts'
import { formatDate } from '../lib/format.ts'
import { mayManage, ROLE_DESCRIPTIONS, rolesGrantableBy } from '../lib/roles.ts'
import { useSession } from '../lib/session.tsx'
import { ErrorAlert } from './alert.tsx'
import { CopyButton } from './copy-button.tsx'

/** Inviting by email with a role; the answer's link is shown here once, to copy. */
export function InviteSection({ onInvited }: { onInvited: () => void }) {
  const { account } = useSession()
  const grantable = rolesGrantableBy(account!.organization!.role)
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('member')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [invited, setInvited] = useState<Invited>()

  const linkRef = useRef<HTMLInputElement>(null)
  useEffect(() => {
    if (invited) linkRef.current?.focus()
  }, [invited])
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    setInvited(undefined)
    try {
      setInvited(await invitations.create(email.trim(), role))
      setEmail('')
      onInvited()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="card" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite someone</h2>
      <form onSubmit={submit} className="inline-form">
        <div className="field grow">
          <label htmlFor="invite-email">Email</label>
          <input
            id="invite-email"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {grantable.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="button primary" disabled={busy || email.trim() === ''}>
          {busy ? 'Inviting…' : 'Invite'}
        </button>
      </form>
      <p className="hint">{ROLE_DESCRIPTIONS[role]}</p>
      <ErrorAlert error={error} prefix="No invitation was made." />
      {invited ? (
        <div className="key-reveal">
          <h3>Invitation link for {invited.invitation.email}</h3>
          <p id="invitation-link-note">
            <strong>Copy it now: this link is shown only once.</strong> It works once, until{' '}
            {formatDate(invited.invitation.expiresAt)}, for {invited.invitation.email} only.
            {invited.emailed ? ' It was also sent by email.' : ' Send it to them yourself.'}
          </p>
          <div className="inline-form">
            <div className="field grow">
              <label htmlFor="invitation-link">Invitation link</label>
              {/* Focused (and selected) once made: a keyboard or screen-reader user is taken to the link shown
                  once, with what to do with it (trial12: it appeared in silence, the focus on the page's start). */}
              <input
                id="invitation-link"
                ref={linkRef}
                readOnly
                aria-describedby="invitation-link-note"
                value={invited.link}
                className="mono"
                onFocus={(e) => e.target.select()}
              />
            </div>
            <CopyButton text={invited.link} label="Copy link" />
          </div>
        </div>
      ) : null}
    </section>
  )
}

/** A pending invitation, with Revoke for those who may. */
export function PendingInvitation({
  invitation,
  onRevoked,
}: {
  invitation: Invitation
  onRevoked: () => void
}) {
  const { account } = useSession()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const revocable = mayManage(account!.organization!.role, invitation.role)
  const revoke = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await invitations.revoke(invitation.id)
      onRevoked()
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <li className="card row-card">
      <div>
        <h3>{invitation.email}</h3>
        <p className="muted">
          {invitation.role} · invited by {invitation.invitedBy?.name ?? 'someone'} · expires{' '}
          {formatDate(invitation.expiresAt)}
        </p>
        <ErrorAlert error={error} prefix="Not revoked." />
      </div>
      {revocable ? (
        <button
          type="button"
          className="button secondary"
          onClick={revoke}
          disabled={busy}
          aria-label={`Revoke the invitation of ${invitation.email}`}
        >
          Revoke
        </button>
      ) : null}
    </li>
  )
}
