import { useCallback, useEffect, useState } from 'react'
import { ApiError, setForbiddenHandler, setUnauthorizedHandler } from './api/client.ts'
import { auth } from './api/endpoints.ts'
import type { Permission } from './api/types.ts'
import { Layout } from './components/layout.tsx'
import { Redirect, useRouter } from './lib/router.tsx'
import {
  homeFor,
  isPublic,
  matchRoute,
  paths,
  type Route,
  requiredPermission,
  safeNext,
} from './lib/routes.ts'
import { useSession } from './lib/session.tsx'
import { AnalyticsPage } from './pages/analytics.tsx'
import { AuditPage } from './pages/audit.tsx'
import { ChatbotPage } from './pages/chatbot.tsx'
import { ChatbotsPage } from './pages/chatbots.tsx'
import { ConversationPage } from './pages/conversation.tsx'
import { ConversationsPage } from './pages/conversations.tsx'
import { JoinPage } from './pages/join.tsx'
import { MembersPage } from './pages/members.tsx'
import { NoOrganizationPage } from './pages/no-organization.tsx'
import { ForbiddenPage, NotFoundPage } from './pages/not-found.tsx'
import { SignInPage, SignUpPage } from './pages/sign-in.tsx'
import { TopicsPage } from './pages/topics.tsx'

const ACCOUNT_POLL_MS = 30_000

export function App() {
  const { location } = useRouter()
  const { account, setAccount } = useSession()
  const [unreachable, setUnreachable] = useState(false)
  const [attempt, setAttempt] = useState(0)

  // A 403 means the role or membership may have changed since this page was drawn: read it again.
  const refreshAccount = useCallback(() => {
    auth.me().then(setAccount, (err) => {
      if (err instanceof ApiError && err.status === 401) setAccount(null)
    })
  }, [setAccount])
  useEffect(() => setUnauthorizedHandler(() => setAccount(null)), [setAccount])
  useEffect(() => setForbiddenHandler(refreshAccount), [refreshAccount])
  // A role changed or a removal elsewhere shows without a refused request too: now and then, and when
  // the tab comes back into view.
  const signedIn = Boolean(account)
  useEffect(() => {
    if (!signedIn) return
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') refreshAccount()
    }, ACCOUNT_POLL_MS)
    const onVisible = () => {
      if (document.visibilityState === 'visible') refreshAccount()
    }
    document.addEventListener('visibilitychange', onVisible)
    return () => {
      clearInterval(timer)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }, [signedIn, refreshAccount])

  // biome-ignore lint/correctness/useExhaustiveDependencies: attempt re-runs the check after "Try again".
  useEffect(() => {
    let active = true
    auth.me().then(
      (me) => active && setAccount(me),
      (err) => {
        if (!active) return
        if (err instanceof ApiError && err.status === 401) setAccount(null)
        else setUnreachable(true)
      },
    )
    return () => {
      active = false
    }
  }, [setAccount, attempt])

  if (account === undefined) {
    return (
      <main className="splash" id="main">
        {unreachable ? (
          <div role="alert">
            <h1>The server cannot be reached</h1>
            <button
              type="button"
              className="button"
              onClick={() => {
                setUnreachable(false)
                setAttempt((a) => a + 1)
              }}
            >
              Try again
            </button>
          </div>
        ) : (
          <p role="status">Loading…</p>
        )}
      </main>
    )
  }

  const route = matchRoute(location.pathname)
  // An invitation link works signed in (to join as yourself) and signed out (to sign up).
  if (route.name === 'join') return <JoinPage />
  if (!account && !isPublic(route)) return <Redirect to={paths.signIn(location.pathname + location.search)} />
  if (account && isPublic(route)) return <Redirect to={safeNext(location.search)} />
  if (!account) return route.name === 'signUp' ? <SignUpPage /> : <SignInPage />
  if (!account.organization) {
    return (
      <Layout>
        <NoOrganizationPage />
      </Layout>
    )
  }
  return <Layout>{page(route, account.organization.permissions)}</Layout>
}

function page(route: Route, permissions: readonly Permission[]) {
  const needed = requiredPermission(route)
  if (needed && !permissions.includes(needed)) return <ForbiddenPage />
  switch (route.name) {
    case 'home':
      return <Redirect to={homeFor(permissions)} />
    case 'chatbots':
      return <ChatbotsPage />
    case 'chatbot':
      return <ChatbotPage key={route.id} id={route.id} />
    case 'conversations':
      return <ConversationsPage />
    case 'conversation':
      return <ConversationPage key={route.id} id={route.id} />
    case 'topics':
      return <TopicsPage />
    case 'analytics':
      return <AnalyticsPage />
    case 'members':
      return <MembersPage />
    case 'audit':
      return <AuditPage />
    case 'signIn':
    case 'signUp':
    case 'join':
    case 'notFound':
      return <NotFoundPage />
    default: {
      const unhandled: never = route
      return unhandled
    }
  }
}
