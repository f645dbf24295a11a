import type { FastifyInstance } from 'fastify'
import type { QueryDeps } from '../deps.ts'

export async function registerAnalyticsRoutes(_app: FastifyInstance, _deps: QueryDeps): Promise<void> {}
