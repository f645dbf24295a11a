import { ALL_GROUPS } from '@cas/config'

/** The all-in-one runs every service, so it reads every variable. */
export const ALL_IN_ONE_CONFIG = ALL_GROUPS
