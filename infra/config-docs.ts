import { ALL_GROUPS, configTables, type Group, replaceBetweenMarkers } from '@cas/config'
import { ALL_IN_ONE_CONFIG } from '../services/all-in-one/src/config.ts'
import { ANALYSIS_CONFIG } from '../services/analysis/src/config.ts'
import { GATEWAY_CONFIG } from '../services/gateway/src/config.ts'
import { PROJECTOR_CONFIG } from '../services/projector/src/config.ts'
import { QUERY_CONFIG } from '../services/query/src/config.ts'
import { RELAY_CONFIG } from '../services/relay/src/config.ts'

export const BEGIN =
  '<!-- config:begin (generated from libs/config by `npm run docs:config`: edit the schema, not this) -->'
export const END = '<!-- config:end -->'

/** The groups each process parses (its src/config.ts): the tables say who reads what. */
const SERVICES: Readonly<Record<string, readonly Group[]>> = {
  gateway: GATEWAY_CONFIG,
  query: QUERY_CONFIG,
  projector: PROJECTOR_CONFIG,
  analysis: ANALYSIS_CONFIG,
  relay: RELAY_CONFIG,
  'all-in-one': ALL_IN_ONE_CONFIG,
}

/** docs/configuration.md with its tables as the schema generates them. */
export function withConfigTables(markdown: string): string {
  return replaceBetweenMarkers(markdown, BEGIN, END, configTables(ALL_GROUPS, SERVICES))
}
