import { type FormEvent, useState } from 'react'
import { auth } from '../api/endpoints.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_RULES } from '../lib/password-rules.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths, safeNext } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'

export function SignInPage() {
  const { location, navigate } = useRouter()
  const { setAccount } = useSession()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    setBusy(true)
    setError(undefined)
    try {
      const account = await auth.signIn({
        email: String(form.get('email')),
        password: String(form.get('password')),
      })
      setAccount(account)
      navigate(safeNext(location.search), { replace: true })
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }

  return (
    <main id="main" className="auth-page">
      <div className="card auth-card">
        <p className="brand-line">Conversation Analytics</p>
        <PageHeading title="Sign in" />
        <form onSubmit={submit} className="stack">
          <ErrorAlert error={error} />
          <div className="field">
            <label htmlFor="email">Email</label>
            <input id="email" name="email" type="email" autoComplete="email" required />
          </div>
          <div className="field">
            <label htmlFor="password">Password</label>
            <input id="password" name="password" type="password" autoComplete="current-password" required />
          </div>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p>
          New here? <Link to={paths.signUp() + location.search}>Create an account</Link>
        </p>
      </div>
    </main>
  )
}

export function SignUpPage() {
  const { location, navigate } = useRouter()
  const { setAccount } = useSession()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const name = String(form.get('name')).trim()
    setBusy(true)
    setError(undefined)
    try {
      const account = await auth.signUp({
        email: String(form.get('email')),
        password: String(form.get('password')),
        organizationName: String(form.get('organizationName')),
        ...(name ? { name } : {}),
      })
      setAccount(account)
      navigate(safeNext(location.search), { replace: true })
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }

  return (
    <main id="main" className="auth-page">
      <div className="card auth-card">
        <p className="brand-line">Conversation Analytics</p>
        <PageHeading title="Create your account" />
        <p className="muted">You get an organization of your own; the chatbots you add belong to it.</p>
        <form onSubmit={submit} className="stack">
          <ErrorAlert error={error} />
          <div className="field">
            <label htmlFor="name">Your name (optional)</label>
            <input id="name" name="name" autoComplete="name" maxLength={100} />
          </div>
          <div className="field">
            <label htmlFor="email">Email</label>
            <input id="email" name="email" type="email" autoComplete="email" required />
          </div>
          <div className="field">
            <label htmlFor="organizationName">Organization name</label>
            <input
              id="organizationName"
              name="organizationName"
              autoComplete="organization"
              required
              maxLength={100}
            />
          </div>
          <div className="field">
            <label htmlFor="password">Password</label>
            <input
              id="password"
              name="password"
              type="password"
              autoComplete="new-password"
              required
              minLength={PASSWORD_MIN_LENGTH}
              maxLength={PASSWORD_MAX_LENGTH}
              aria-describedby="password-hint"
            />
            <p id="password-hint" className="hint">
              {PASSWORD_RULES}
            </p>
          </div>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Creating your account…' : 'Create account'}
          </button>
        </form>
        <p>
          Already have an account? <Link to={paths.signIn() + location.search}>Sign in</Link>
        </p>
      </div>
    </main>
  )
}
