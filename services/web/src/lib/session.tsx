import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react'
import type { Account, Permission } from '../api/types.ts'

interface SessionValue {
  /** undefined while the session is being checked, null when signed out. */
  readonly account: Account | null | undefined
  setAccount(account: Account | null): void
  /** Whether the role in the current organization allows it (for showing controls; the server decides). */
  can(permission: Permission): boolean
  /** A key the server just returned (create, rotate), kept in memory only: never stored, gone on reload. */
  freshKey(chatbotId: string): string | undefined
  rememberKey(chatbotId: string, apiKey: string): void
  forgetKey(chatbotId: string): void
}

const SessionContext = createContext<SessionValue | null>(null)

export function SessionProvider({ children }: { children: ReactNode }) {
  const [account, setAccountState] = useState<Account | null | undefined>(undefined)
  const [keys, setKeys] = useState<ReadonlyMap<string, string>>(new Map())

  const setAccount = useCallback((next: Account | null) => {
    setAccountState((previous) => {
      // Keys belong to whoever was signed in, in the organization they were shown in.
      if (next === null || next.organization?.id !== previous?.organization?.id) setKeys(new Map())
      return next
    })
  }, [])
  const can = useCallback(
    (permission: Permission) => account?.organization?.permissions.includes(permission) ?? false,
    [account],
  )
  const rememberKey = useCallback((id: string, apiKey: string) => {
    setKeys((m) => new Map(m).set(id, apiKey))
  }, [])
  const forgetKey = useCallback((id: string) => {
    setKeys((m) => {
      const copy = new Map(m)
      copy.delete(id)
      return copy
    })
  }, [])
  const freshKey = useCallback((id: string) => keys.get(id), [keys])

  const value = useMemo(
    () => ({ account, setAccount, can, freshKey, rememberKey, forgetKey }),
    [account, setAccount, can, freshKey, rememberKey, forgetKey],
  )
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext)
  if (!value) throw new Error('useSession outside <SessionProvider>')
  return value
}
