import type { HttpConfig } from '@cas/config'
import type { HttpAppOptions, PoolUsage } from '@cas/http'

/** The HTTP app's options from the HTTP group: proxy trust, and load shedding on `pools`' saturation. */
export function httpAppOptions(
  config: HttpConfig,
  pools: readonly PoolUsage[],
): Pick<HttpAppOptions, 'trustProxy' | 'loadShedding'> {
  return {
    trustProxy: config.TRUST_PROXY,
    loadShedding: {
      maxEventLoopDelayMs: config.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS,
      maxPoolWaiting: config.OVERLOAD_MAX_POOL_WAITING,
      pools,
    },
  }
}
