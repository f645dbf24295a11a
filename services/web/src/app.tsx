import { useEffect, useState } from 'react'
import { ApiError, setUnauthorizedHandler } from './api/client.ts'
import { auth } from './api/endpoints.ts'
import { Layout } from './components/layout.tsx'
import { Redirect, useRouter } from './lib/router.tsx'
import { isPublic, matchRoute, paths, type Route, safeNext } from './lib/routes.ts'
import { useSession } from './lib/session.tsx'
import { AnalyticsPage } from './pages/analytics.tsx'
import { ChatbotPage } from './pages/chatbot.tsx'
import { ChatbotsPage } from './pages/chatbots.tsx'
import { ConversationPage } from './pages/conversation.tsx'
import { ConversationsPage } from './pages/conversations.tsx'
import { NotFoundPage } from './pages/not-found.tsx'
import { SignInPage, SignUpPage } from './pages/sign-in.tsx'
import { TopicsPage } from './pages/topics.tsx'

export function App() {
  const { location } = useRouter()
  const { account, setAccount } = useSession()
  const [unreachable, setUnreachable] = useState(false)
  const [attempt, setAttempt] = useState(0)

  useEffect(() => setUnauthorizedHandler(() => setAccount(null)), [setAccount])

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
  if (!account && !isPublic(route)) return <Redirect to={paths.signIn(location.pathname + location.search)} />
  if (account && isPublic(route)) return <Redirect to={safeNext(location.search)} />
  if (!account) return route.name === 'signUp' ? <SignUpPage /> : <SignInPage />
  return <Layout>{page(route)}</Layout>
}

function page(route: Route) {
  switch (route.name) {
    case 'home':
      return <Redirect to={paths.chatbots()} />
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
    case 'signIn':
    case 'signUp':
    case 'notFound':
      return <NotFoundPage />
    default: {
      const unhandled: never = route
      return unhandled
    }
  }
}
