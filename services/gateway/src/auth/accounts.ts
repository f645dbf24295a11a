import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import type pg from 'pg'

export interface Account {
  readonly user: { readonly id: string; readonly email: string; readonly name: string }
  readonly organization: { readonly id: string; readonly name: string }
}

export interface NewAccount {
  /** Already trimmed and lowercased. */
  readonly email: string
  readonly name: string
  readonly passwordHash: string
  readonly organizationName: string
}

const UNIQUE_VIOLATION = '23505'

/** Creates an organization and its owner together; 'email_taken' when the email already has an account. */
export async function createAccount(
  pool: pg.Pool,
  account: NewAccount,
  now: Date,
): Promise<Account | 'email_taken'> {
  const organization = { id: randomUUID(), name: account.organizationName }
  const user = { id: randomUUID(), email: account.email, name: account.name }
  try {
    await withTransaction(pool, async (client) => {
      await client.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [
        organization.id,
        organization.name,
        now,
      ])
      await client.query(
        `INSERT INTO users (id, org_id, email, name, role, password_hash, created_at)
         VALUES ($1, $2, $3, $4, 'owner', $5, $6)`,
        [user.id, organization.id, user.email, user.name, account.passwordHash, now],
      )
    })
  } catch (err) {
    // The unique constraint, not a prior SELECT, decides: two concurrent sign-ups can't both win.
    if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) return 'email_taken'
    throw err
  }
  return { user, organization }
}

interface AccountRow {
  user_id: string
  email: string
  user_name: string
  org_id: string
  org_name: string
}

const ACCOUNT_COLUMNS = 'u.id AS user_id, u.email, u.name AS user_name, o.id AS org_id, o.name AS org_name'
const USERS_WITH_ORGANIZATION = 'users u JOIN organizations o ON o.id = u.org_id'

/** The account for an email with its password hash, which must go no further than the verification. */
export async function findAccountForLogin(
  pool: pg.Pool,
  email: string,
): Promise<{ account: Account; passwordHash: string } | null> {
  const { rows } = await pool.query<AccountRow & { password_hash: string }>(
    `SELECT ${ACCOUNT_COLUMNS}, u.password_hash FROM ${USERS_WITH_ORGANIZATION} WHERE u.email = $1`,
    [email],
  )
  const row = rows[0]
  return row ? { account: toAccount(row), passwordHash: row.password_hash } : null
}

export async function findAccount(pool: pg.Pool, userId: string): Promise<Account | null> {
  const { rows } = await pool.query<AccountRow>(
    `SELECT ${ACCOUNT_COLUMNS} FROM ${USERS_WITH_ORGANIZATION} WHERE u.id = $1`,
    [userId],
  )
  const row = rows[0]
  return row ? toAccount(row) : null
}

function toAccount(row: AccountRow): Account {
  return {
    user: { id: row.user_id, email: row.email, name: row.user_name },
    organization: { id: row.org_id, name: row.org_name },
  }
}
