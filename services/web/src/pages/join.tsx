import { type FormEvent, useEffect, useState } from 'react'
import { ApiError } from '../api/client.ts'
import { auth, invitations } from '../api/endpoints.ts'
import type { InvitationPreview } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { formatDate } from '../lib/format.ts'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_RULES } from '../lib/password-rules.ts'
import { ROLE_DESCRIPTIONS } from '../lib/roles.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { article } from './not-found.tsx'

/**
 * An invitation link (`/join#<token>`): the token is in the fragment, which the browser never sends to a
 * server; the page posts it in a request body. Signed in as the invited person: join. Signed out: create
 * the account with the invited email (or sign in first, and come back here).
 */
export function JoinPage() {
  const token = window.location.hash.slice(1)
  const { account } = useSession()
  const [preview, setPreview] = useState<InvitationPreview>()
  const [error, setError] = useState<unknown>()

  useEffect(() => {
    if (!token) return
    let active = true
    invitations.lookup(token).then(
      (found) => active && setPreview(found),
      (err) => active && setError(err),
    )
    return () => {
      active = false
    }
  }, [token])

  return (
    <main id="main" className="auth-page">
      <div className="card auth-card">
        <p className="brand-line">Conversation Analytics</p>
        <PageHeading title={preview ? `Join ${preview.organization.name}` : 'Invitation'} />
        {!token ? (
          <p role="alert" className="alert error">
            This invitation link is incomplete: open the whole link you were sent.
          </p>
        ) : error ? (
          <>
            <ErrorAlert error={error} />
            <p>
              <Link to={account ? paths.home() : paths.signIn()}>
                {account ? 'Back to the start' : 'Sign in'}
              </Link>
            </p>
          </>
        ) : !preview ? (
          <p role="status">Opening the invitation…</p>
        ) : (
          <>
            <p>
              {preview.invitedBy ?? 'Someone'} invited <strong>{preview.email}</strong> to join{' '}
              <strong>{preview.organization.name}</strong> as {article(preview.role)}{' '}
              <strong>{preview.role}</strong> ({ROLE_DESCRIPTIONS[preview.role]}). The invitation works once,
              until {formatDate(preview.expiresAt)}.
            </p>
            {account ? (
              <JoinAsYourself token={token} preview={preview} />
            ) : (
              <SignUpToJoin token={token} preview={preview} />
            )}
          </>
        )}
      </div>
    </main>
  )
}

function JoinAsYourself({ token, preview }: { token: string; preview: InvitationPreview }) {
  const { account, setAccount } = useSession()
  const { navigate } = useRouter()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  if (account!.user.email !== preview.email) {
    const signOut = async () => {
      await auth.signOut().catch(() => {})
      setAccount(null)
    }
    return (
      <>
        <p className="alert error" role="alert">
          You are signed in as {account!.user.email}, but this invitation is for {preview.email}. Sign out,
          then sign in (or sign up) as {preview.email} to accept it.
        </p>
        <button type="button" className="button secondary" onClick={signOut}>
          Sign out
        </button>
      </>
    )
  }
  const join = async () => {
    setBusy(true)
    setError(undefined)
    try {
      setAccount(await invitations.accept({ token }))
      navigate(paths.home(), { replace: true })
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <>
      <ErrorAlert error={error} />
      <button type="button" className="button primary" onClick={join} disabled={busy}>
        {busy ? 'Joining…' : `Join ${preview.organization.name}`}
      </button>
    </>
  )
}

function SignUpToJoin({ token, preview }: { token: string; preview: InvitationPreview }) {
  const { setAccount } = useSession()
  const { navigate } = useRouter()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const signInFirst = paths.signIn(`/join#${token}`)

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const name = String(form.get('name')).trim()
    setBusy(true)
    setError(undefined)
    try {
      setAccount(
        await invitations.accept({
          token,
          password: String(form.get('password')),
          ...(name ? { name } : {}),
        }),
      )
      navigate(paths.home(), { replace: true })
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  const hasAccount = error instanceof ApiError && error.status === 409
  return (
    <>
      <form onSubmit={submit} className="stack">
        <ErrorAlert error={error} />
        {hasAccount ? (
          <p>
            <Link to={signInFirst}>Sign in as {preview.email}</Link> to accept the invitation.
          </p>
        ) : null}
        <div className="field">
          <label htmlFor="join-email">Email</label>
          <input id="join-email" type="email" value={preview.email} readOnly autoComplete="username" />
        </div>
        <div className="field">
          <label htmlFor="join-name">Your name (optional)</label>
          <input id="join-name" name="name" autoComplete="name" maxLength={100} />
        </div>
        <div className="field">
          <label htmlFor="join-password">Choose a password</label>
          <input
            id="join-password"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={PASSWORD_MIN_LENGTH}
            maxLength={PASSWORD_MAX_LENGTH}
            aria-describedby="join-password-hint"
          />
          <p id="join-password-hint" className="hint">
            {PASSWORD_RULES}
          </p>
        </div>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Creating your account…' : 'Create account and join'}
        </button>
      </form>
      <p>
        Already have an account? <Link to={signInFirst}>Sign in</Link>, and you'll come back here.
      </p>
    </>
  )
}
