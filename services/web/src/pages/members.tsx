import { type FormEvent, useState } from 'react'
import { invitations, members, organizations } from '../api/endpoints.ts'
import type { Invited, Member, Role } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { CopyButton } from '../components/copy-button.tsx'
import { Dialog } from '../components/dialog.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { formatDate } from '../lib/format.ts'
import { mayManage, ROLE_DESCRIPTIONS, rolesGrantableBy } from '../lib/roles.ts'
import { useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { usePolled } from '../lib/use-poll.ts'

const POLL_MS = 15_000

/**
 * The organization's people: who is in it with which role (and changing or removing them), pending
 * invitations (inviting, copying the one-time link, revoking), leaving, and deleting the organization.
 * Each control shows only for a role that may use it; the server decides every request regardless.
 */
export function MembersPage() {
  const { account, can } = useSession()
  const organization = account!.organization!
  const list = usePolled(
    (signal) => (can('members:read') ? members.list(signal) : Promise.resolve([])),
    organization.id,
    POLL_MS,
  )
  const pending = usePolled(
    (signal) => (can('members:manage') ? invitations.list(signal) : Promise.resolve([])),
    organization.id,
    POLL_MS,
  )

  return (
    <section className="page">
      <PageHeading title="Members" />
      <p className="muted">
        {organization.name}: you are{' '}
        {organization.role === 'owner' || organization.role === 'admin' ? 'an' : 'a'}{' '}
        <strong>{organization.role}</strong> ({ROLE_DESCRIPTIONS[organization.role]}).
      </p>
      {can('members:manage') ? <InviteSection onInvited={pending.refresh} /> : null}
      {can('members:read') ? (
        <section aria-labelledby="members-heading">
          <h2 id="members-heading">People</h2>
          <ErrorAlert error={list.error} />
          {list.loading ? (
            <p role="status">Loading members…</p>
          ) : (
            <MemberTable rows={list.data ?? []} onChanged={list.refresh} />
          )}
        </section>
      ) : null}
      {can('members:manage') ? (
        <section aria-labelledby="pending-heading">
          <h2 id="pending-heading">Pending invitations</h2>
          <ErrorAlert error={pending.error} />
          {pending.data?.length === 0 ? (
            <p className="empty">No pending invitations.</p>
          ) : (
            <ul className="card-list">
              {pending.data?.map((invitation) => (
                <PendingInvitation key={invitation.id} invitation={invitation} onRevoked={pending.refresh} />
              ))}
            </ul>
          )}
        </section>
      ) : null}
      <LeaveSection />
      {can('organization:delete') ? <DeleteOrganizationSection /> : null}
      <CreateOrganizationSection />
    </section>
  )
}

function InviteSection({ onInvited }: { onInvited: () => void }) {
  const { account } = useSession()
  const grantable = rolesGrantableBy(account!.organization!.role)
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('member')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [invited, setInvited] = useState<Invited>()

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
          <p>
            <strong>Copy it now: this link is shown only once.</strong> It works once, until{' '}
            {formatDate(invited.invitation.expiresAt)}, for {invited.invitation.email} only.
            {invited.emailed ? ' It was also sent by email.' : ' Send it to them yourself.'}
          </p>
          <div className="inline-form">
            <div className="field grow">
              <label htmlFor="invitation-link">Invitation link</label>
              <input
                id="invitation-link"
                readOnly
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

function MemberTable({ rows, onChanged }: { rows: readonly Member[]; onChanged: () => void }) {
  const { account, can } = useSession()
  const me = account!.user.id
  const myRole = account!.organization!.role
  return (
    // Fixed layout, cells wrapping anywhere: it fits a phone without scrolling sideways.
    <table className="members-table">
      <caption className="visually-hidden">Members and their roles</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Email</th>
          <th scope="col">Role</th>
          <th scope="col">Joined</th>
          {can('members:manage') ? <th scope="col">Actions</th> : null}
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <MemberRow
            key={m.userId}
            member={m}
            isMe={m.userId === me}
            manageable={can('members:manage') && mayManage(myRole, m.role)}
            showActions={can('members:manage')}
            onChanged={onChanged}
          />
        ))}
      </tbody>
    </table>
  )
}

function MemberRow({
  member,
  isMe,
  manageable,
  showActions,
  onChanged,
}: {
  member: Member
  isMe: boolean
  manageable: boolean
  showActions: boolean
  onChanged: () => void
}) {
  const { account } = useSession()
  const grantable = rolesGrantableBy(account!.organization!.role)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [confirming, setConfirming] = useState(false)
  const label = `${member.name}${isMe ? ' (you)' : ''}`

  const change = async (role: Role) => {
    setBusy(true)
    setError(undefined)
    try {
      await members.setRole(member.userId, role)
      onChanged()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const remove = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await members.remove(member.userId)
      setConfirming(false)
      onChanged()
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }

  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{member.email}</td>
      <td>
        {manageable && !isMe ? (
          <>
            <label htmlFor={`role-${member.userId}`} className="visually-hidden">
              Role of {member.name}
            </label>
            <select
              id={`role-${member.userId}`}
              value={member.role}
              disabled={busy}
              onChange={(e) => void change(e.target.value as Role)}
            >
              {[...new Set([member.role, ...grantable])].map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </>
        ) : (
          member.role
        )}
        <ErrorAlert error={error} />
      </td>
      <td>{formatDate(member.joinedAt)}</td>
      {showActions ? (
        <td>
          {manageable && !isMe ? (
            <>
              <button
                type="button"
                className="button subtle"
                onClick={() => setConfirming(true)}
                aria-label={`Remove ${member.name}`}
              >
                Remove…
              </button>
              <Dialog open={confirming} title={`Remove ${member.name}?`} onClose={() => setConfirming(false)}>
                <p>
                  {member.name} ({member.email}) loses access to this organization at once, in every session
                  they have open. They can be invited again later.
                </p>
                <ErrorAlert error={error} />
                <div className="dialog-actions">
                  <button type="button" className="button secondary" onClick={() => setConfirming(false)}>
                    Cancel
                  </button>
                  <button type="button" className="button danger" onClick={remove} disabled={busy}>
                    {busy ? 'Removing…' : 'Remove'}
                  </button>
                </div>
              </Dialog>
            </>
          ) : null}
        </td>
      ) : null}
    </tr>
  )
}

function PendingInvitation({
  invitation,
  onRevoked,
}: {
  invitation: { id: string; email: string; role: Role; expiresAt: string; invitedBy: { name: string } | null }
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

function LeaveSection() {
  const { account, setAccount } = useSession()
  const { navigate } = useRouter()
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const organization = account!.organization!
  const leave = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const next = await organizations.leave()
      setAccount(next)
      navigate(paths.home(), { replace: true })
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <section className="card" aria-labelledby="leave-heading">
      <h2 id="leave-heading">Leave {organization.name}</h2>
      <p>You lose access at once; only a new invitation brings you back.</p>
      <button type="button" className="button secondary" onClick={() => setConfirming(true)}>
        Leave organization…
      </button>
      <ErrorAlert error={error} prefix="You did not leave." />
      <Dialog open={confirming} title={`Leave ${organization.name}?`} onClose={() => setConfirming(false)}>
        <p>
          You will no longer see {organization.name}'s chatbots, conversations or analytics. An organization
          keeps at least one owner: as its last owner, make someone else an owner first.
        </p>
        <ErrorAlert error={error} />
        <div className="dialog-actions">
          <button type="button" className="button secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
          <button type="button" className="button danger" onClick={leave} disabled={busy}>
            {busy ? 'Leaving…' : 'Leave'}
          </button>
        </div>
      </Dialog>
    </section>
  )
}

function DeleteOrganizationSection() {
  const { account, setAccount } = useSession()
  const { navigate } = useRouter()
  const organization = account!.organization!
  const [confirming, setConfirming] = useState(false)
  const [typed, setTyped] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const matches = typed === organization.name
  const remove = async (event: FormEvent) => {
    event.preventDefault()
    if (!matches) return
    setBusy(true)
    setError(undefined)
    try {
      const next = await organizations.remove()
      setAccount(next)
      navigate(paths.home(), { replace: true })
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  const close = () => {
    setConfirming(false)
    setTyped('')
  }
  return (
    <section className="card danger-zone" aria-labelledby="delete-org-heading">
      <h2 id="delete-org-heading">Delete organization</h2>
      <p>
        Deletes every chatbot with all its data, and the organization's members, invitations and audit log.
      </p>
      <button type="button" className="button danger" onClick={() => setConfirming(true)}>
        Delete organization…
      </button>
      <Dialog open={confirming} title={`Delete ${organization.name}?`} onClose={close}>
        <form onSubmit={remove} className="stack">
          <p>
            <strong>This is permanent and cannot be undone.</strong> Every chatbot (its key stops working at
            once), conversation, message and analysis result, every membership and the audit log are deleted.
          </p>
          <div className="field">
            <label htmlFor="confirm-org-name">
              Type <strong>{organization.name}</strong> to confirm
            </label>
            <input
              id="confirm-org-name"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              spellCheck={false}
            />
          </div>
          <ErrorAlert error={error} prefix="The organization was not deleted." />
          <div className="dialog-actions">
            <button type="button" className="button secondary" onClick={close}>
              Cancel
            </button>
            <button type="submit" className="button danger" disabled={!matches || busy}>
              {busy ? 'Deleting…' : 'Delete permanently'}
            </button>
          </div>
        </form>
      </Dialog>
    </section>
  )
}

/** A new organization of your own, which you own; the session switches to it. */
export function CreateOrganizationSection({ first = false }: { first?: boolean }) {
  const { setAccount } = useSession()
  const { navigate } = useRouter()
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const create = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      setAccount(await organizations.create(name.trim()))
      navigate(paths.home())
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <section className="card" aria-labelledby="create-org-heading">
      <h2 id="create-org-heading">{first ? 'Create an organization' : 'Create another organization'}</h2>
      <p className="muted">You will be its owner, and can invite others to it.</p>
      <form onSubmit={create} className="inline-form">
        <div className="field grow">
          <label htmlFor="new-organization-name">Organization name</label>
          <input
            id="new-organization-name"
            value={name}
            maxLength={100}
            required
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" className="button secondary" disabled={busy || name.trim() === ''}>
          {busy ? 'Creating…' : 'Create organization'}
        </button>
      </form>
      <ErrorAlert error={error} prefix="The organization was not created." />
    </section>
  )
}
