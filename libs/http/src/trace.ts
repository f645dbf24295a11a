import type { FastifyRequest } from 'fastify'

/** Event metadata tying events to the request that produced them (EVENTS.md: metadata). */
export type EventTrace = Readonly<Record<'correlationId' | 'causationId' | 'requestId', string>> &
  Readonly<Record<string, string>>

/**
 * The tracing metadata for the events a request commits: the request id is the correlation id of the
 * whole flow (the analysis events that follow carry it on), and, as the command, their causation.
 */
export function eventTrace(request: FastifyRequest): EventTrace {
  return { correlationId: request.id, causationId: request.id, requestId: request.id }
}
