export { originCheck } from './origin-check.ts'
export {
  can,
  keepsAnOwner,
  mayActOnRole,
  mayManage,
  PERMISSIONS,
  type Permission,
  permissionsOf,
  ROLES,
  rolesGrantableBy,
} from './permissions.ts'
export {
  actorTrace,
  type Principal,
  requirePermission,
  requireUser,
  type SignedIn,
} from './principal.ts'
export { loadSessionSecret } from './session-secret.ts'
export { PgSessionStore, revokeUserSessions, type SessionPolicy, sessionKey } from './session-store.ts'
export { registerCookieSession, registerSessions, SESSION_COOKIE, type SessionDeps } from './sessions.ts'
