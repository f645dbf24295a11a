import {
  type ConfigOf,
  capture,
  http,
  INFRASTRUCTURE_GROUPS,
  invitations,
  retention,
  sessions,
  signIn,
} from '@cas/config'

/** What the gateway's app reads: capture, sign-in, organizations, chatbot commands, retention. */
export const GATEWAY_APP_CONFIG = [http, sessions, signIn, capture, invitations, retention] as const
export type GatewayAppConfig = ConfigOf<typeof GATEWAY_APP_CONFIG>

/** The variables the gateway process reads: the infrastructure, and its app's. */
export const GATEWAY_CONFIG = [...INFRASTRUCTURE_GROUPS, ...GATEWAY_APP_CONFIG] as const
