import { analysis, capture, invitations, reads, retention, sessions, signIn } from './features.ts'
import { type ConfigOf, type GroupValues, parseConfig } from './group.ts'
import { database, encryption, eventLog, http, relay, server } from './infrastructure.ts'

export { configTables, replaceBetweenMarkers } from './docs.ts'
export { analysis, capture, invitations, reads, retention, sessions, signIn } from './features.ts'
export {
  ConfigError,
  type ConfigOf,
  defaultOf,
  defaultsOf,
  type Group,
  type GroupValues,
  parseConfig,
  valuesOf,
} from './group.ts'
export { database, encryption, eventLog, http, relay, server } from './infrastructure.ts'

/**
 * Every variable, by concern. A service parses only the groups it uses (its src/config.ts lists them);
 * docs/configuration.md is generated from these (`npm run docs:config`).
 */
export const ALL_GROUPS = [
  server,
  database,
  encryption,
  eventLog,
  relay,
  http,
  sessions,
  reads,
  signIn,
  capture,
  invitations,
  retention,
  analysis,
] as const

/** What every process opens: the database, the master key and the event log. */
export const INFRASTRUCTURE_GROUPS = [server, database, encryption, eventLog] as const
export type InfrastructureConfig = ConfigOf<typeof INFRASTRUCTURE_GROUPS>

export type ServerConfig = GroupValues<typeof server>
export type DatabaseConfig = GroupValues<typeof database>
export type EventLogConfig = GroupValues<typeof eventLog>
export type RelayConfig = GroupValues<typeof relay>
export type HttpConfig = GroupValues<typeof http>
export type SessionConfig = GroupValues<typeof sessions>
export type ReadsConfig = GroupValues<typeof reads>
export type SignInConfig = GroupValues<typeof signIn>
export type CaptureConfig = GroupValues<typeof capture>
export type InvitationsConfig = GroupValues<typeof invitations>
export type RetentionConfig = GroupValues<typeof retention>
export type AnalysisConfig = GroupValues<typeof analysis>

/** Every variable: what the all-in-one (and the command-line tools) parse. */
export type AllConfig = ConfigOf<typeof ALL_GROUPS>

/** Parses every variable (the all-in-one's configuration), throwing a ConfigError naming each bad one. */
export function loadConfig(env: Record<string, string | undefined>): AllConfig {
  return parseConfig(ALL_GROUPS, env)
}
