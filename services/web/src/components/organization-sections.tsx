import { type FormEvent, useState } from 'react'
import { organizations } from '../api/endpoints.ts'
import type { Member } from '../api/types.ts'
import { mayLeave } from '../lib/roles.ts'
import { useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { ErrorAlert } from './alert.tsx'
import { ConfirmByNameDialog } from './confirm-by-name.tsx'
import { ConfirmActions, Dialog } from './dialog.tsx'

/**
 * Leaving the current organization, after a confirmation; not offered to its last owner, who is told
 * why instead. `members`: the organization's people, when the role may read them (an owner's may).
 */
export function LeaveSection({
  members,
  onRefused,
}: {
  members: readonly Member[] | undefined
  /** Called when the server refused, so the page reads who is an owner again. */
  onRefused: () => void
}) {
  const { account, setAccount } = useSession()
  const { navigate } = useRouter()
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const organization = account!.organization!
  const allowed = mayLeave(organization.role, account!.user.id, members)
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
      onRefused()
    }
  }
  const open = () => {
    setError(undefined)
    setConfirming(true)
  }
  return (
    <section className="card" aria-labelledby="leave-heading">
      <h2 id="leave-heading">Leave {organization.name}</h2>
      {allowed === false ? (
        <p>
          You are the only owner of {organization.name}, and an organization keeps at least one owner: to
          leave it, make someone else an owner first (under People), or delete the organization.
        </p>
      ) : (
        <>
          <p>You lose access at once; only a new invitation brings you back.</p>
          <button type="button" className="button secondary" onClick={open} disabled={allowed === undefined}>
            Leave organization…
          </button>
        </>
      )}
      {/* A refusal is shown once: in the dialog while it is open, here once it is closed. */}
      {confirming ? null : <ErrorAlert error={error} prefix="You did not leave." />}
      <Dialog open={confirming} title={`Leave ${organization.name}?`} onClose={() => setConfirming(false)}>
        <p>
          You will no longer see {organization.name}'s chatbots, conversations or analytics. An organization
          keeps at least one owner: as its last owner, make someone else an owner first.
        </p>
        <ErrorAlert error={error} prefix="You did not leave." />
        <ConfirmActions
          onCancel={() => setConfirming(false)}
          onConfirm={leave}
          busy={busy}
          label="Leave"
          busyLabel="Leaving…"
        />
      </Dialog>
    </section>
  )
}

/** Deleting the current organization (owners), after typing its name. */
export function DeleteOrganizationSection() {
  const { account, setAccount } = useSession()
  const { navigate } = useRouter()
  const organization = account!.organization!
  const [confirming, setConfirming] = useState(false)
  return (
    <section className="card danger-zone" aria-labelledby="delete-org-heading">
      <h2 id="delete-org-heading">Delete organization</h2>
      <p>
        Deletes every chatbot with all its data, and the organization's members, invitations and audit log.
      </p>
      <button type="button" className="button danger" onClick={() => setConfirming(true)}>
        Delete organization…
      </button>
      <ConfirmByNameDialog
        open={confirming}
        onClose={() => setConfirming(false)}
        title={`Delete ${organization.name}?`}
        name={organization.name}
        inputId="confirm-org-name"
        errorPrefix="The organization was not deleted."
        onConfirm={async () => {
          setAccount(await organizations.remove())
          navigate(paths.home(), { replace: true })
        }}
      >
        Every chatbot (its key stops working at once), conversation, message and analysis result, every
        membership and the audit log are deleted.
      </ConfirmByNameDialog>
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
