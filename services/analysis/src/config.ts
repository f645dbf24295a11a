import { analysis, type ConfigOf, INFRASTRUCTURE_GROUPS } from '@cas/config'

/** The variables the analysis service reads: its analyzer and how much it does at once. */
export const ANALYSIS_CONFIG = [...INFRASTRUCTURE_GROUPS, analysis] as const
export type AnalysisServiceConfig = ConfigOf<typeof ANALYSIS_CONFIG>
