import { z } from 'zod'

export const uuidSchema = z.uuid()

/** ISO 8601 in UTC only (`…Z`): offsets are normalised away before an event is recorded. */
export const utcTimestampSchema = z.iso.datetime()

/**
 * A journal position is a Postgres bigint and can exceed 2^53, so it travels as a canonical
 * decimal string (no sign, no leading zeros); compare positions with `BigInt`, never `Number`.
 */
export const journalPositionSchema = z
  .string()
  .regex(/^(0|[1-9]\d*)$/, 'expected a non-negative integer as a canonical decimal string')

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

export const jsonValueSchema: z.ZodType<JsonValue> = z
  .lazy(() =>
    z.union([
      z.string(),
      z.number(),
      z.boolean(),
      z.null(),
      z.array(jsonValueSchema),
      z.record(z.string(), jsonValueSchema),
    ]),
  )
  .meta({ id: 'JsonValue', description: 'Any JSON value.' })

export const jsonObjectSchema = z.record(z.string(), jsonValueSchema)

/**
 * Value of a custom field or an extra end-user metadata field: the objects holding them (a capture's
 * `user`, `organization`, `session`, `custom`, `metadata`) are flat, one level deep.
 */
export const primitiveValueSchema = z.union([z.string(), z.number(), z.boolean()], {
  error: 'must be a string, number or boolean (this object is flat: no nested objects or arrays)',
})

export type DeepReadonly<T> = T extends readonly (infer Item)[]
  ? readonly DeepReadonly<Item>[]
  : T extends object
    ? { readonly [Key in keyof T]: DeepReadonly<T[Key]> }
    : T
