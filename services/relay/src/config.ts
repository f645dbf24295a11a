import { type ConfigOf, INFRASTRUCTURE_GROUPS, relay } from '@cas/config'

/** The variables the relay reads: the infrastructure, and its batches. */
export const RELAY_CONFIG = [...INFRASTRUCTURE_GROUPS, relay] as const
export type RelayServiceConfig = ConfigOf<typeof RELAY_CONFIG>
