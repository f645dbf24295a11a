import { z } from 'zod'
import { ERROR_STATUS, type ErrorCode } from './errors.ts'
import { ERROR_RESPONSE_KEY } from './openapi.ts'

/** The API.md error body, for route response schemas (and so the OpenAPI document). */
export const errorBodySchema = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    details: z
      .array(z.object({ path: z.string(), message: z.string(), in: z.string().optional() }))
      .optional(),
  }),
})

/**
 * Response schemas for the error statuses a route can answer with, keyed by status. In the OpenAPI
 * document each becomes a reference to the shared response of its code (libs/http/src/openapi.ts), which
 * describes it and gives an example.
 */
export function errorResponses(...codes: ErrorCode[]): Record<number, typeof errorBodySchema> {
  return Object.fromEntries(
    codes.map((code) => [ERROR_STATUS[code], errorBodySchema.meta({ [ERROR_RESPONSE_KEY]: code })]),
  )
}

const FIRST_STORABLE_MS = Date.parse('0001-01-01T00:00:00Z')
const END_STORABLE_MS = Date.parse('+010000-01-01T00:00:00Z')

/**
 * An ISO 8601 date-time with a zone that Postgres can store and compare: once in UTC, within the years
 * 0001 to 9999 (a zone offset can push a four-digit year past either end). For request fields and query
 * parameters that reach a timestamptz.
 */
export const isoDateTimeSchema = z.iso
  .datetime({
    offset: true,
    // A value that is no date-time has no year to check: the range below would only add a wrong reason.
    abort: true,
    // Zod's own "Invalid ISO datetime" leaves a caller sending local time (no zone) to guess what is wrong.
    error: 'must be an ISO 8601 date-time with a zone, Z or +hh:mm (e.g. 2026-11-28T10:00:00Z)',
  })
  .refine((value) => {
    const ms = Date.parse(value)
    return ms >= FIRST_STORABLE_MS && ms < END_STORABLE_MS
  }, 'must be between the years 0001 and 9999 in UTC')
