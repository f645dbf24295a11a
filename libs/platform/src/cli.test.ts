import { describe, expect, it } from 'vitest'
import { cliFailureLine, databaseWhere } from './cli.ts'

describe('cliFailureLine', () => {
  it('names an unreachable database by host, port and database, never its user or password', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5433'), { code: 'ECONNREFUSED' })
    expect(cliFailureLine('dead-letters', refused, 'postgres://ops:s3cret@10.0.0.5:5433/cas')).toBe(
      'dead-letters: cannot reach the database 10.0.0.5:5433/cas (DATABASE_URL): connect ECONNREFUSED 10.0.0.5:5433',
    )
    const password = Object.assign(new Error('password authentication failed for user "ops"'), {
      code: '28P01',
    })
    expect(cliFailureLine('replay', password, 'postgres://ops:s3cret@db/cas')).toBe(
      'replay: cannot reach the database db:5432/cas (DATABASE_URL): password authentication failed for user "ops"',
    )
    const both = new AggregateError(
      [Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })],
      '',
    )
    expect(cliFailureLine('replay', both, 'postgres://localhost/cas')).toBe(
      'replay: cannot reach the database localhost:5432/cas (DATABASE_URL): connect ECONNREFUSED ::1:5432',
    )
  })

  it('says any other failure by the first line of its message', () => {
    const failed = Object.assign(new Error('relation "x" does not exist\n  at somewhere'), { code: '42P01' })
    expect(cliFailureLine('reanalyze', failed, 'postgres://db/cas')).toBe(
      'reanalyze: relation "x" does not exist',
    )
    expect(cliFailureLine('reanalyze', new Error('no embedded server'), undefined)).toBe(
      'reanalyze: no embedded server',
    )
  })
})

describe('databaseWhere', () => {
  it('reads a Unix socket directory from host=, and a URL that is none as such', () => {
    expect(databaseWhere('postgres://postgres@localhost:55432/cas?host=/tmp/pg')).toBe('/tmp/pg:55432/cas')
    expect(databaseWhere('not a url')).toBe('(a DATABASE_URL that is not a URL)')
  })
})
