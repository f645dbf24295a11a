import { useEffect, useRef, useState } from 'react'
import { members } from '../api/endpoints.ts'
import type { Member, Role } from '../api/types.ts'
import { formatDate } from '../lib/format.ts'
import { mayManage, ROLES, rolesGrantableBy } from '../lib/roles.ts'
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

  // Choosing in the list only picks; "Change role" applies it (trial12: arrowing through the list, as
  // keyboard and screen-reader users do to hear the options, changed the role at every step, the first step
  // down from member being owner). The options keep one order, the roles' own.
  const [picked, setPicked] = useState<Role>()
  const [changed, setChanged] = useState<string>()
  const selectRef = useRef<HTMLSelectElement>(null)
  const chosen = picked ?? member.role
  // Picked until the list has the role it was changed to (or someone else changed it meanwhile).
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new role from the server clears what was picked.
  useEffect(() => setPicked(undefined), [member.role])
  const options = ROLES.filter((r) => r === member.role || grantable.includes(r))
  const change = async (role: Role) => {
    setBusy(true)
    setError(undefined)
    setChanged(undefined)
    try {
      await members.setRole(member.userId, role)
      setChanged(`Role of ${member.name} changed to ${role}.`)
      selectRef.current?.focus()
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
              ref={selectRef}
              value={chosen}
              onChange={(e) => {
                setChanged(undefined)
                setPicked(e.target.value as Role)
              }}
            >
              {options.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
            {chosen !== member.role ? (
              <button
                type="button"
                className="button subtle"
                aria-disabled={busy || undefined}
                onClick={() => {
                  if (!busy) void change(chosen)
                }}
              >
                Change role
              </button>
            ) : null}
          </>
        ) : (
          member.role
        )}
        <span role="status" className="visually-hidden">
          {changed ?? ''}
        </span>
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
