import { INFRASTRUCTURE_GROUPS } from '@cas/config'

/** The variables the projector reads: only the infrastructure every process opens. */
export const PROJECTOR_CONFIG = INFRASTRUCTURE_GROUPS
