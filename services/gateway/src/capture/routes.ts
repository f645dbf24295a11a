import type { Config } from '@cas/config'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'

export interface CaptureRouteDeps {
  readonly pool: pg.Pool
  readonly config: Config
  readonly now: () => Date
}

export async function registerCapture(_app: FastifyInstance, _deps: CaptureRouteDeps): Promise<void> {}
