import { z } from 'zod'
import { ERROR_STATUS, type ErrorCode } from './errors.ts'

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

/** Response schemas for the error statuses a route can answer with, keyed by status. */
export function errorResponses(...codes: ErrorCode[]): Record<number, typeof errorBodySchema> {
  return Object.fromEntries(codes.map((code) => [ERROR_STATUS[code], errorBodySchema]))
}
