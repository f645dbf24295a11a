import type pg from 'pg'

/**
 * How a rebuild's shadow tables (in `schema`) differ from the live tables of `public` they are to replace:
 * a table missing, a column missing, extra or of another type, nullability or default, a unique index
 * (which the projection's upserts rely on; by name and definition, `sameIndex`) or a check constraint (by
 * name and definition: the swap would move the shadow's, an older one, onto the live table) missing or
 * extra. None for a run begun by this version. A run left running by an older one, before a migration that
 * added a read-model table, had none of it: resumed with `search_path = <schema>, public`, the projector
 * wrote that table's rows into the live one.
 *
 * Tables of the schema not in `tables` (a read model this version no longer has) are not compared: the
 * projection no longer writes them, the swap does not move them, and they go with the schema.
 */
export async function shadowTableDifferences(
  client: pg.Pool | pg.ClientBase,
  schema: string,
  tables: readonly string[],
): Promise<string[]> {
  const { rows: columns } = await client.query<Described>(
    `SELECT n.nspname = 'public' AS live, c.relname AS "table", a.attname AS name,
            format_type(a.atttypid, a.atttypmod)
              || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
              || CASE a.attidentity WHEN '' THEN '' ELSE ' IDENTITY' END
              || coalesce(CASE a.attgenerated WHEN '' THEN ' DEFAULT ' ELSE ' GENERATED ' END
                   || pg_get_expr(d.adbin, d.adrelid), '') AS definition
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
      WHERE n.nspname IN ('public', $1) AND c.relname = ANY($2::text[]) AND c.relkind = 'r'`,
    [schema, tables],
  )
  // As the indexing phase reads and compares them (rebuild.ts): by name and definition (`indexKey`).
  const uniques: Described[] = []
  for (const table of tables) {
    for (const [live, of] of [
      [true, 'public'],
      [false, schema],
    ] as const) {
      for (const index of await indexesOf(client, of, table))
        if (index.unique) uniques.push({ live, table, name: index.name, definition: withoutSchema(index) })
    }
  }
  const { rows: checks } = await client.query<Described>(
    // By name and definition, as unique indexes: the swap moves the shadow's constraint, name and all, onto
    // the live table. LIKE copies a NOT VALID constraint valid (the shadow table is empty): the same constraint.
    `SELECT n.nspname = 'public' AS live, t.relname AS "table",
            c.conname AS name, regexp_replace(pg_get_constraintdef(c.oid), ' NOT VALID$', '') AS definition
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE c.contype = 'c' AND n.nspname IN ('public', $1) AND t.relname = ANY($2::text[])`,
    [schema, tables],
  )
  const differences: string[] = []
  for (const table of tables) {
    const live = describedBy(columns, table, true, (c) => c.name)
    const shadow = describedBy(columns, table, false, (c) => c.name)
    if (shadow.size === 0) {
      differences.push(`${table} missing`)
      continue
    }
    for (const [name, { definition }] of live) {
      const theirs = shadow.get(name)?.definition
      if (theirs === undefined) differences.push(`${table}.${name} missing`)
      else if (theirs !== definition) differences.push(`${table}.${name} is ${theirs}, not ${definition}`)
    }
    for (const name of shadow.keys())
      if (!live.has(name)) differences.push(`${table}.${name} no longer exists`)
    // Unique indexes and check constraints by name and definition.
    for (const [kind, rows] of [
      ['unique index', uniques],
      ['check constraint', checks],
    ] as const) {
      const liveOnes = describedBy(rows, table, true, nameAndDefinition)
      const shadowOnes = describedBy(rows, table, false, nameAndDefinition)
      for (const [key, { name }] of liveOnes)
        if (!shadowOnes.has(key)) differences.push(`${table}: ${kind} ${name} missing`)
      for (const [key, { name }] of shadowOnes)
        if (!liveOnes.has(key)) differences.push(`${table}: ${kind} ${name} no longer exists`)
    }
  }
  return differences
}

/** An index of `schema`.`table`, as rebuild.ts's indexing phase and the resume check compare them. */
export interface IndexDefinition {
  readonly schema: string
  readonly table: string
  readonly name: string
  readonly unique: boolean
  readonly valid: boolean
  /** The constraint the index backs (primary key, unique), if any. */
  readonly constraint: string | null
  /** CREATE INDEX …, or the constraint's definition (PRIMARY KEY (…)). */
  readonly definition: string
}

export async function indexesOf(
  client: pg.Pool | pg.ClientBase,
  schema: string,
  table: string,
): Promise<IndexDefinition[]> {
  const { rows } = await client.query<IndexDefinition>(
    `SELECT n.nspname AS schema, t.relname AS "table", i.relname AS name, x.indisunique AS "unique",
            x.indisvalid AS valid, c.conname AS "constraint",
            coalesce(pg_get_constraintdef(c.oid), pg_get_indexdef(i.oid)) AS definition
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       LEFT JOIN pg_constraint c ON c.conindid = i.oid AND c.conrelid = t.oid AND c.contype IN ('p', 'u')
      WHERE n.nspname = $1 AND t.relname = $2
      ORDER BY i.relname`,
    [schema, table],
  )
  return rows
}

/**
 * An index's definition without its table's schema: the same for a shadow table's index as for the live
 * table's it copies. The one place the schema is taken out, so that the resume check and the indexing
 * phase mean the same by "the same index".
 */
function withoutSchema(index: IndexDefinition): string {
  return index.definition.replace(` ON ${index.schema}.${index.table} `, ` ON ${index.table} `)
}

/**
 * Whether `built`, an index of a shadow table, is the live table's `index`: the same name and the same
 * definition, the schema aside. The indexing phase keeps such an index and builds any other again; the
 * resume check compares unique indexes so too. Compared regardless of their names, a run whose primary key a
 * migration since renamed was resumed, and its indexing phase then failed for ever adding the live key
 * beside its own ('multiple primary keys').
 */
export function sameIndex(built: IndexDefinition, index: IndexDefinition): boolean {
  return indexKey(built) === indexKey(index)
}

function indexKey(index: IndexDefinition): string {
  return nameAndDefinition({ name: index.name, definition: withoutSchema(index) })
}

interface Described {
  readonly live: boolean
  readonly table: string
  readonly name: string
  readonly definition: string
}

/** The live (or shadow) table's rows of `rows`, by `key`. */
function describedBy(
  rows: readonly Described[],
  table: string,
  live: boolean,
  key: (row: Described) => string,
): Map<string, Described> {
  return new Map(rows.filter((r) => r.table === table && r.live === live).map((r) => [key(r), r]))
}

function nameAndDefinition(row: { name: string; definition: string }): string {
  return `${row.name}: ${row.definition}`
}
