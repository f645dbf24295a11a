import type { Config } from '@cas/config'
import { AppError } from '@cas/http'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type pg from 'pg'

export interface AuthDeps {
  readonly pool: pg.Pool
  readonly config: Config
  readonly now: () => Date
}

/** The signed-in user a dashboard request acts for. */
export interface Principal {
  readonly userId: string
  readonly orgId: string
}

export async function registerAuth(_app: FastifyInstance, _deps: AuthDeps): Promise<void> {}

export function requireSession(_request: FastifyRequest): Principal {
  throw new AppError('unauthorized', 'Sign in first.')
}
