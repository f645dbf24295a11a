import { type ReactNode, useState } from 'react'
import { auth } from '../api/endpoints.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'

const NAV = [
  { to: paths.chatbots(), label: 'Chatbots', section: '/chatbots' },
  { to: paths.conversations(), label: 'Conversations', section: '/conversations' },
  { to: paths.topics(), label: 'Topics', section: '/topics' },
  { to: paths.analytics(), label: 'Analytics', section: '/analytics' },
]

/** The signed-in frame: skip link, header with navigation and account, and the page's main region. */
export function Layout({ children }: { children: ReactNode }) {
  const { location, navigate } = useRouter()
  const { account, setAccount } = useSession()
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

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to={paths.chatbots()} className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          Conversation Analytics
        </Link>
        <nav aria-label="Main">
          <ul className="nav-list">
            {NAV.map((item) => (
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
          <span className="account-name">
            {account?.user.name} <span className="muted">· {account?.organization.name}</span>
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
