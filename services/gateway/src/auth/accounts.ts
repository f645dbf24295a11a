import { randomUUID } from 'node:crypto'
import { type Permission, permissionsOf } from '@cas/auth'
import { withTransaction } from '@cas/db'
import type { OrganizationRole } from '@cas/events'
import type pg from 'pg'
import { runOrganizationCommand } from '../organizations/commands.ts'

export interface UserView {
  readonly id: string
  readonly email: string
  readonly name: string
}

export interface OrganizationSummary {
  readonly id: string
  readonly name: string
  readonly role: OrganizationRole
}

/** A signed-in person as the API shows them: who they are, where they are working, where they belong. */
export interface Account {
  readonly user: UserView
  /** The organization the session works in, with their role and what it allows; null when none. */
  readonly organization: (OrganizationSummary & { readonly permissions: Permission[] }) | null
  /** Every organization they belong to, in the order they joined. */
  readonly organizations: OrganizationSummary[]
}

export interface NewUser {
  /** Already trimmed and lowercased. */
  readonly email: string
  readonly name: string
  readonly passwordHash: string
}

/**
 * Creates a person in the caller's transaction; 'email_taken' when the email already has an account. The
 * unique constraint decides (ON CONFLICT), not a prior SELECT: two concurrent sign-ups can't both win.
 */
export async function createUser(
  client: pg.ClientBase,
  user: NewUser,
  now: Date,
): Promise<UserView | 'email_taken'> {
  const id = randomUUID()
  const { rowCount } = await client.query(
    `INSERT INTO users (id, email, name, password_hash, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (email) DO NOTHING`,
    [id, user.email, user.name, user.passwordHash, now],
  )
  return rowCount === 1 ? { id, email: user.email, name: user.name } : 'email_taken'
}

/**
 * Creates a person and a new organization with them as its owner, in one transaction (sign-up); its
 * events name them as the actor. 'email_taken' when the email already has an account.
 */
export async function createAccount(
  pool: pg.Pool,
  account: NewUser & { readonly organizationName: string },
  now: () => Date,
  trace: Readonly<Record<string, string>>,
): Promise<{ user: UserView; orgId: string } | 'email_taken'> {
  return withTransaction(pool, async (client) => {
    const user = await createUser(client, account, now())
    if (user === 'email_taken') return user
    const orgId = await createOrganization(client, user, account.organizationName, now, {
      ...trace,
      actorId: user.id,
    })
    return { user, orgId }
  })
}

/** A new organization with `founder` as its owner, in the caller's transaction; returns its id. */
export async function createOrganization(
  client: pg.ClientBase,
  founder: UserView,
  name: string,
  now: () => Date,
  trace: Readonly<Record<string, string>>,
): Promise<string> {
  const orgId = randomUUID()
  await runOrganizationCommand(
    client,
    orgId,
    { type: 'create', name, founder: { userId: founder.id, email: founder.email } },
    { now, trace },
  )
  return orgId
}

/** The person with this email and their password hash, which must go no further than the verification. */
export async function findUserForLogin(
  pool: pg.Pool,
  email: string,
): Promise<{ userId: string; passwordHash: string } | null> {
  const { rows } = await pool.query<{ id: string; password_hash: string }>(
    'SELECT id, password_hash FROM users WHERE email = $1',
    [email],
  )
  const row = rows[0]
  return row ? { userId: row.id, passwordHash: row.password_hash } : null
}

/**
 * A person's account with `current` as the organization they work in when they belong to it. With
 * `current` undefined (a new sign-in), the first organization they joined; with null, none. Null when
 * the person no longer exists.
 */
export async function findAccount(
  db: pg.Pool | pg.ClientBase,
  userId: string,
  current?: string | null,
): Promise<Account | null> {
  const { rows: users } = await db.query<UserView>('SELECT id, email, name FROM users WHERE id = $1', [
    userId,
  ])
  const user = users[0]
  if (!user) return null
  const { rows } = await db.query<OrganizationSummary>(
    `SELECT o.id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = $1 ORDER BY m.joined_at, m.org_id`,
    [userId],
  )
  const chosen =
    current === undefined ? rows[0] : current === null ? undefined : rows.find((o) => o.id === current)
  return {
    user,
    organization: chosen ? { ...chosen, permissions: permissionsOf(chosen.role) } : null,
    organizations: rows,
  }
}
