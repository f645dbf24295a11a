import { z } from 'zod'

/** One environment variable: how it is parsed, and what docs/configuration.md says of it. */
export interface Variable<S extends z.ZodType = z.ZodType> {
  readonly schema: S
  /** The default as the table shows it (`unset`, `generated`, a value). */
  readonly default: string
  /** What the number counts, when the name does not say it (`…_MS`, `…_MINUTES` do). */
  readonly unit?: string
  /** One line: what it does and why its default is what it is. */
  readonly meaning: string
}

/** Variables of one concern (the database, capture, analysis, …), parsed and documented together. */
export interface Group<V extends Record<string, Variable> = Record<string, Variable>> {
  readonly title: string
  /** One line on the concern, above its table. */
  readonly about: string
  readonly variables: V
  /** Settings that only make sense together: a problem per variable, as `NAME: why`. */
  check?(values: GroupValues<Group<V>>): string[]
}

export type GroupValues<G extends Group> = {
  [K in keyof G['variables']]: z.output<G['variables'][K]['schema']>
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never

/** The parsed values of some groups: what a service (or a route module, a group at a time) is given. */
export type ConfigOf<Gs extends readonly Group[]> = UnionToIntersection<ValuesOfEach<Gs[number]>>
type ValuesOfEach<G> = G extends Group ? GroupValues<G> : never

export function group<V extends Record<string, Variable>>(def: Group<V>): Group<V> {
  return def
}

/**
 * A variable: its schema states its default (zod `.default()`), the one place it is written; the
 * configuration table shows it as the schema produces it. `absent` says, for a variable without a
 * default, what happens when it is unset (`generated`, `derived`, a path made of others); `unset` when
 * omitted.
 */
export function variable<S extends z.ZodType>(
  schema: S,
  doc: { absent?: string; unit?: string; meaning: string },
): Variable<S> {
  const value = defaultOf(schema)
  if (value !== undefined && doc.absent !== undefined)
    throw new Error(`a variable with a default (${value}) says nothing of its absence (${doc.absent})`)
  return {
    schema: schema.describe(doc.meaning),
    default: value ?? doc.absent ?? 'unset',
    ...(doc.unit ? { unit: doc.unit } : {}),
    meaning: doc.meaning,
  }
}

/**
 * The schema's default as the table shows it (the value written, before any transform: `.data`, not the
 * absolute path it resolves to); undefined when it has none.
 */
export function defaultOf(schema: z.ZodType): string | undefined {
  const found = writtenDefault(schema)
  if (!found) return undefined
  const value = found.value
  if (value === undefined) return undefined
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : value.join(',')
  if (value === '') return 'empty'
  return String(value)
}

/** The `.default()` in a schema, looked for through pipes (transforms) and wrappers. */
function writtenDefault(schema: z.ZodType): { value: unknown } | undefined {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def
  if (def.type === 'default') {
    const d = def.defaultValue
    return { value: typeof d === 'function' ? (d as () => unknown)() : d }
  }
  for (const inner of [def.in, def.innerType]) {
    if (inner) {
      const found = writtenDefault(inner as z.ZodType)
      if (found) return found
    }
  }
  return undefined
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`)
    this.name = 'ConfigError'
  }
}

/**
 * Parses the variables of `groups` from the environment (empty strings count as unset; variables of other
 * groups are not looked at), throwing a ConfigError naming each bad variable.
 */
export function parseConfig<const Gs extends readonly Group[]>(
  groups: Gs,
  env: Record<string, string | undefined>,
): ConfigOf<Gs> {
  const shape: Record<string, z.ZodType> = {}
  for (const g of groups) for (const [name, v] of Object.entries(g.variables)) shape[name] = v.schema
  const present = Object.fromEntries(
    Object.keys(shape).flatMap((name) => (env[name] ? [[name, env[name]]] : [])),
  )
  const parsed = z.object(shape).safeParse(present)
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))
  }
  const problems = groups.flatMap((g) => g.check?.(parsed.data as never) ?? [])
  if (problems.length > 0) throw new ConfigError(problems)
  return parsed.data as ConfigOf<Gs>
}

/**
 * What `g`'s variables are when unset: the schema's defaults, for code that runs without a parsed
 * configuration (tests, tools) and must not state a default of its own.
 */
export function defaultsOf<G extends Group>(g: G): GroupValues<G> {
  return parseConfig([g], {}) as GroupValues<G>
}

/** Only `g`'s variables of a parsed configuration: what a module that reads that concern is given. */
export function valuesOf<G extends Group>(g: G, config: GroupValues<G>): GroupValues<G> {
  return Object.fromEntries(Object.keys(g.variables).map((name) => [name, config[name]])) as GroupValues<G>
}
