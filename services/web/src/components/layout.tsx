import { type ReactNode, useState } from 'react'
import { auth } from '../api/endpoints.ts'
import type { Permission } from '../api/types.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { ErrorAlert } from './alert.tsx'

const NAV: { to: string; label: string; section: string; needs?: Permission }[] = [
  { to: paths.chatbots(), label: 'Chatbots', section: '/chatbots', needs: 'chatbots:read' },
  {
    to: paths.conversations(),
    label: 'Conversations',
    section: '/conversations',
    needs: 'conversations:read',
  },
  { to: paths.topics(), label: 'Topics', section: '/topics', needs: 'analytics:read' },
  { to: paths.analytics(), label: 'Analytics', section: '/analytics', needs: 'analytics:read' },
  { to: paths.members(), label: 'Members', section: '/members' },
  { to: paths.audit(), label: 'Audit log', section: '/audit', needs: 'audit:read' },
]

/** The signed-in frame: skip link, header with navigation and account, and the page's main region. */
export function Layout({ children }: { children: ReactNode }) {
  const { location, navigate } = useRouter()
  const { account, setAccount, can } = useSession()
  const [signingOut, setSigningOut] = useState(false)

  const signOut = async () => {
    setSigningOut(true)
    try {
      await auth.signOut()
    } catch {
      // Signed out on the server or not, this tab forgets the account; the cookie is HttpOnly.
    }
    setAccount(null)
    navigate(paths.signIn(), { replace: true })
  }

  // Pages of an organization only make sense inside one.
  const nav = account?.organization ? NAV.filter((item) => !item.needs || can(item.needs)) : []
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to={paths.home()} className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          Conversation Analytics
        </Link>
        <nav aria-label="Main">
          <ul className="nav-list">
            {nav.map((item) => (
              <li key={item.to}>
                <Link
                  to={item.to}
                  aria-current={location.pathname.startsWith(item.section) ? 'page' : undefined}
                >
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account">
          <OrganizationSwitcher />
          <span className="account-name">
            {account?.user.name}
            {account?.organization ? <span className="muted"> · {account.organization.role}</span> : null}
          </span>
          <button type="button" className="button subtle" onClick={signOut} disabled={signingOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  )
}

/**
 * The organization this session works in, and the others the person belongs to: switching re-scopes
 * every page (the server's row-level security included) and starts over at that organization's home.
 * Choosing in the list only picks; the Switch button switches (trial12: a keyboard user arrowing through
 * the list switched organization, and page, at every step).
 */
function OrganizationSwitcher() {
  const { account, setAccount } = useSession()
  const { navigate } = useRouter()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [picked, setPicked] = useState<string>()
  if (!account) return null
  const current = account.organization
  if (account.organizations.length === 0) return null
  const chosen = picked ?? current?.id ?? ''

  const switchTo = async (organizationId: string) => {
    setBusy(true)
    setError(undefined)
    try {
      const next = await auth.switchOrganization(organizationId)
      setAccount(next)
      setPicked(undefined)
      navigate(paths.home())
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form
      className="org-switcher"
      onSubmit={(e) => {
        e.preventDefault()
        if (chosen && chosen !== current?.id && !busy) void switchTo(chosen)
      }}
    >
      <label htmlFor="organization-switcher" className="visually-hidden">
        Organization
      </label>
      <select id="organization-switcher" value={chosen} onChange={(e) => setPicked(e.target.value)}>
        {current ? null : <option value="">Choose an organization</option>}
        {account.organizations.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name} ({o.role})
          </option>
        ))}
      </select>
      {chosen && chosen !== current?.id ? (
        <button type="submit" className="button subtle" aria-disabled={busy || undefined}>
          Switch
        </button>
      ) : null}
      <ErrorAlert error={error} prefix="Could not switch." />
    </form>
  )
}
