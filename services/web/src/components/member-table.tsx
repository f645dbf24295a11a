import { useState } from 'react'
import { members } from '../api/endpoints.ts'
import type { Member, Role } from '../api/types.ts'
import { formatDate } from '../lib/format.ts'
import { mayManage, rolesGrantableBy } from '../lib/roles.ts'
import { useSession } from '../lib/session.tsx'
import { ErrorAlert } from './alert.tsx'
import { ConfirmActions, Dialog } from './dialog.tsx'

/**
 * The organization's people with their roles; for those who may manage them, a role select and Remove…
 * on each row they may act on (not their own: leaving is below, and an owner's only for owners).
 */
export function MemberTable({ rows, onChanged }: { rows: readonly Member[]; onChanged: () => void }) {
  const { account, can } = useSession()
  const me = account!.user.id
  const myRole = account!.organization!.role
  return (
    // Fixed layout, cells wrapping anywhere; on a phone each row stacks as a card, its cells named by
    // data-label (styles.css): five columns do not fit 390 px.
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
      <td data-label="Email">{member.email}</td>
      <td data-label="Role">
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
        {/* A refusal is shown once: in the Remove dialog while it is open, here otherwise. */}
        {confirming ? null : <ErrorAlert error={error} />}
      </td>
      <td data-label="Joined">{formatDate(member.joinedAt)}</td>
      {showActions ? (
        <td className="member-actions">
          {manageable && !isMe ? (
            <>
              <button
                type="button"
                className="button subtle"
                onClick={() => {
                  setError(undefined)
                  setConfirming(true)
                }}
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
                <ConfirmActions
                  onCancel={() => setConfirming(false)}
                  onConfirm={remove}
                  busy={busy}
                  label="Remove"
                  busyLabel="Removing…"
                />
              </Dialog>
            </>
          ) : null}
        </td>
      ) : null}
    </tr>
  )
}
