import {
  type AnchorHTMLAttributes,
  createContext,
  type MouseEvent,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
} from 'react'

export interface Location {
  readonly pathname: string
  readonly search: string
  /** Increases with every navigation, so pages can tell a new visit from a re-render. */
  readonly key: number
}

interface RouterValue {
  readonly location: Location
  navigate(to: string, opts?: { replace?: boolean }): void
}

const RouterContext = createContext<RouterValue | null>(null)

function current(key: number): Location {
  return { pathname: window.location.pathname, search: window.location.search, key }
}

/** History-API routing: the server answers every page path with the app (see services/query dashboard.ts). */
export function Router({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(() => current(0))

  useEffect(() => {
    const onPop = () => setLocation((l) => current(l.key + 1))
    window.addEventListener('popstate', onPop)
    return () => window.removeEventListener('popstate', onPop)
  }, [])

  const navigate = useCallback((to: string, opts: { replace?: boolean } = {}) => {
    const url = new URL(to, window.location.origin)
    const same = url.pathname === window.location.pathname && url.search === window.location.search
    if (opts.replace || same) window.history.replaceState(null, '', to)
    else window.history.pushState(null, '', to)
    if (!same) window.scrollTo(0, 0)
    setLocation((l) => current(l.key + 1))
  }, [])

  const value = useMemo(() => ({ location, navigate }), [location, navigate])
  return <RouterContext.Provider value={value}>{children}</RouterContext.Provider>
}

export function useRouter(): RouterValue {
  const value = useContext(RouterContext)
  if (!value) throw new Error('useRouter outside <Router>')
  return value
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { readonly to: string }

/** A real link (open in a new tab, copy the address), navigating in place on a plain click. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const { navigate } = useRouter()
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event)
    if (event.defaultPrevented || event.button !== 0) return
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(to)
  }
  return <a href={to} onClick={handle} {...rest} />
}

/** Replaces the current entry with `to` once rendered (for redirects). */
export function Redirect({ to }: { readonly to: string }) {
  const { navigate } = useRouter()
  useEffect(() => navigate(to, { replace: true }), [navigate, to])
  return null
}
