import type { FastifyInstance } from 'fastify'
import type pg from 'pg'

export interface ChatbotRouteDeps {
  readonly pool: pg.Pool
  readonly now: () => Date
}

export async function registerChatbots(_app: FastifyInstance, _deps: ChatbotRouteDeps): Promise<void> {}
