// trial8: the audit log selected `position::text` and then ran `ORDER BY position DESC`. In ORDER BY, a bare
// name is the output column's first, so it sorted the text ('84738048' above '104202240'), and its pages,
// compared as numbers, skipped entries. Topics, the topic pool, re-analysis and dead-letter re-drives did the
// same. A name qualified by its table (`audit_entries.position`) is the table's column; this test keeps the
// bare name from coming back.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { packageDirs, productionFiles, root } from './support/source-files.ts'

/**
 * The names a statement selects cast without an alias (`position::text` is an output column named
 * `position`) and then orders by, unqualified: there ORDER BY sorts the cast value.
 */
function castOrderings(sql: string): string[] {
  const found: string[] = []
  for (const select of sql.matchAll(/\bSELECT\b([\s\S]*?)\bFROM\b/gi)) {
    const casts = [...select[1]!.matchAll(/(?<![\w."])(\w+)::\w+\b(?!\s*(?:\(|AS\b))/gi)].map((m) => m[1]!)
    const rest = sql.slice(select.index! + select[0].length)
    const order = /\bORDER BY\b([\s\S]*?)(?:\bLIMIT\b|\bOFFSET\b|\bFOR\b|\)|;|$)/i.exec(rest)
    if (!order) continue
    for (const name of casts) {
      if (new RegExp(`(?<![\\w."])${name}\\b`, 'i').test(order[1]!)) found.push(name)
    }
  }
  return found
}

describe('SQL ordered by a column it selects cast under the same name', () => {
  it('is found by the check (the statement trial8 met, and its mended form)', () => {
    expect(
      castOrderings(
        'SELECT event_id, position::text FROM audit_entries WHERE org_id = $1 ORDER BY position DESC',
      ),
    ).toEqual(['position'])
    expect(
      castOrderings(
        'SELECT event_id, position::text FROM audit_entries WHERE org_id = $1 ORDER BY audit_entries.position DESC',
      ),
    ).toEqual([])
    expect(castOrderings('SELECT id, seq::text AS s FROM t ORDER BY seq')).toEqual([])
  })

  it('is in no statement of the services and libraries', () => {
    const statements = packageDirs.flatMap(productionFiles).flatMap((file) =>
      [...readFileSync(path.join(root, file), 'utf8').matchAll(/`([^`]*\bORDER BY\b[^`]*)`/g)].map((m) => ({
        file,
        sql: m[1]!,
      })),
    )
    // The check read the statements it is for.
    expect(statements.length).toBeGreaterThan(50)
    expect(
      statements.flatMap(({ file, sql }) => castOrderings(sql).map((name) => `${file}: ${name}`)),
    ).toEqual([])
  })
})
