import { type ConfigOf, http, INFRASTRUCTURE_GROUPS, reads, sessions } from '@cas/config'

/** The variables the query service reads: dashboard reads, through the row-level-security role. */
export const QUERY_CONFIG = [...INFRASTRUCTURE_GROUPS, http, sessions, reads] as const
export type QueryConfig = ConfigOf<typeof QUERY_CONFIG>
