import type pg from 'pg'

/**
 * Distinct counts for the analytics overview ("conversations and end users with a message in range"),
 * kept so that a year is a sum over at most 8,784 hourly rows (migrations/0013_analytics-reach.sql).
 *
 * THE INVARIANT, everything below exists to keep it (test/support/derived-rollups.ts recomputes each
 * part from rm_hourly_activity by brute force, and the exact-counts tests compare after every kind of
 * change):
 * 1. Chains. For each conversation (rm_hourly_activity), each end user of a chatbot
 *    (rm_chatbot_user_hours) and each end user of an organization (rm_org_user_hours), the rows are
 *    exactly the hours it was active in, and each row's next_hour is its next such hour (null on the
 *    last): next_hour = lead(hour) over the entity's rows. gap_class = floor(log2(hours to next)).
 * 2. Counts. Per hour, rm_hourly_stats.last_active_conversations / last_active_users (per chatbot) and
 *    rm_org_hourly_stats.last_active_users (per organization) count the rows of that hour whose
 *    next_hour is null; rm_org_hourly_stats' other measures are the sums of its chatbots' rows.
 * 3. Membership. rm_org_end_users holds exactly the organization's end users that have hours.
 * Hence: an entity active in [from, to) has exactly one row with from <= hour < to and next_hour >= to
 * or null, so the count in range is the sum of the last-active counts over the range plus the few rows
 * in range whose next_hour is at or after `to` (none for a range ending now; the query service finds
 * them through the gap_class index).
 *
 * Keeping it means, when an hour is added (out of order too), linking it between its neighbours (one
 * statement shape for all three families: linkHours), and when hours go (erasure, a deleted chatbot, an
 * end user replaced within an hour), relinking what remains (removeUserHours); each change of "which row
 * is last" moves one count from an hour to another.
 *
 * Why this much, and no less (issue 19; a year at 10M messages is about 1M rows per family):
 * - count(DISTINCT) over the activity rows (the design before 0013) took 1.0 s for a 365-day overview at
 *   10M messages on an idle machine (bench/README.md). Any reading of a year's rows per family, even an
 *   index-only one without the DISTINCT, reads a million rows where the target is 50 ms; the last-active
 *   counts make a year 8,784 rows instead.
 * - The links are what makes a range not ending now exact: "active in range" for an entity that came
 *   back after `to` is a two-sided condition (an hour in range and one after it), which next_hour turns
 *   into one row spanning `to`. First/last hours per entity, or per run of consecutive hours, miss the
 *   gaps of returning conversations and end users, or need the same successor link between runs (and a
 *   conversation of the benchmark's seed is one hour, one run: no fewer rows).
 * - Three families: the organization's conversation counts are already its chatbots' sums (a
 *   conversation is one chatbot's), but its end users are not (one end user of two chatbots counts
 *   once), so end users have a chain per chatbot and one per organization.
 *
 * Every function runs inside the projector's transaction. End users are shared between conversations,
 * so between projector instances: their rows in rm_org_end_users are locked, in one order, before their
 * hours are linked (upsertActivity locks the users it names; the other paths call lockEndUsers). Hot
 * statements are prepared (named): a batch runs each once, and planning them cost more than running them
 * (the pool has a connection plan them again every 5 s: a plan made over a near-empty table, libs/db pool.ts). */

/** A change to the count of last active hours in one hour, for one chatbot or (chatbotId null) the organization. */
export interface LastActiveDelta {
  orgId: string
  chatbotId: string | null
  hour: string
  delta: number
}

/** A change to how many activity rows one end user has in one hour of one chatbot. */
export interface UserHourDelta {
  orgId: string
  chatbotId: string
  endUserId: string
  hour: string
  delta: number
}

export interface ActivityRow {
  orgId: string
  chatbotId: string
  hour: string
  conversationId: string
  endUserId: string | null
}

interface DeltaRow {
  org_id: string
  chatbot_id: string | null
  hour: Date
  delta: number
}

function lastActive(rows: DeltaRow[]): LastActiveDelta[] {
  return rows.map((r) => ({
    orgId: r.org_id,
    chatbotId: r.chatbot_id,
    hour: r.hour.toISOString(),
    delta: r.delta,
  }))
}

/**
 * Locks the organizations' end users named by `source` (a query of org_id, end_user_id): their
 * rm_org_end_users rows, created if new, in one order, so that two transactions relinking the same user's
 * hours wait for each other rather than interleave. DO UPDATE … WHERE false locks a row without writing it.
 */
const lockSql = (source: string) =>
  `INSERT INTO rm_org_end_users AS u (org_id, end_user_id)
   SELECT DISTINCT org_id, end_user_id FROM (${source}) s ORDER BY 1, 2
   ON CONFLICT (org_id, end_user_id) DO UPDATE SET end_user_id = EXCLUDED.end_user_id WHERE false`

/** The end users named by `source` whose last hours went (erasure, deletion) stop being end users. */
const forgetSql = (source: string) =>
  `DELETE FROM rm_org_end_users u USING (${source}) g
    WHERE (u.org_id, u.end_user_id) = (g.org_id, g.end_user_id)
      AND NOT EXISTS (SELECT FROM rm_org_user_hours h WHERE (h.org_id, h.end_user_id) = (g.org_id, g.end_user_id))`

const GIVEN_USERS = 'SELECT * FROM unnest($1::uuid[], $2::text[]) AS g(org_id, end_user_id)'

/** lockSql of the users given. */
export async function lockEndUsers(
  client: pg.ClientBase,
  users: readonly { orgId: string; endUserId: string }[],
): Promise<void> {
  if (users.length === 0) return
  await client.query(lockSql(GIVEN_USERS), [users.map((u) => u.orgId), users.map((u) => u.endUserId)])
}

/**
 * One family of chains (THE INVARIANT, 1): a table of (entity, hour) rows with next_hour, and what a row
 * carries besides. `ident` are the columns written besides the hour (the entity's, and the scope's that it
 * implies), `entity` those naming one chain, `key` those of the primary key besides the hour, `scope` those
 * the last-active counts are kept by; `payload` is merged into a row that is already there.
 */
interface Chains {
  readonly table: 'rm_hourly_activity' | 'rm_chatbot_user_hours' | 'rm_org_user_hours'
  readonly ident: readonly string[]
  readonly entity: readonly string[]
  readonly key: readonly string[]
  readonly scope: readonly string[]
  readonly types: readonly string[]
  readonly payload: {
    readonly column: string
    readonly type: string
    readonly merge: string
    readonly none: string
  }
}

/** Conversations: their activity rows (one per chatbot, hour and conversation), carrying the end user. */
const CONVERSATIONS: Chains = {
  table: 'rm_hourly_activity',
  ident: ['org_id', 'chatbot_id', 'conversation_id'],
  entity: ['conversation_id'],
  key: ['chatbot_id', 'conversation_id'],
  scope: ['org_id', 'chatbot_id'],
  types: ['uuid', 'uuid', 'uuid'],
  // A later capture in the same hour naming another end user replaces it; one naming none keeps it.
  payload: {
    column: 'end_user_id',
    type: 'text',
    merge: 'coalesce(EXCLUDED.end_user_id, t.end_user_id)',
    none: 'NULL',
  },
}

/** End users' hours, per chatbot and per organization: `conversations` counts their activity rows. */
const COUNTED = {
  column: 'conversations',
  type: 'int',
  merge: 't.conversations + EXCLUDED.conversations',
  none: '0',
}

const CHATBOT_USERS: Chains = {
  table: 'rm_chatbot_user_hours',
  ident: ['org_id', 'chatbot_id', 'end_user_id'],
  entity: ['chatbot_id', 'end_user_id'],
  key: ['chatbot_id', 'end_user_id'],
  scope: ['org_id', 'chatbot_id'],
  types: ['uuid', 'uuid', 'text'],
  payload: COUNTED,
}

const ORG_USERS: Chains = {
  table: 'rm_org_user_hours',
  ident: ['org_id', 'end_user_id'],
  entity: ['org_id', 'end_user_id'],
  key: ['org_id', 'end_user_id'],
  scope: ['org_id'],
  types: ['uuid', 'text'],
  payload: COUNTED,
}

const cols = (names: readonly string[], alias = '') => names.map((n) => `${alias}${n}`).join(', ')
const same = (names: readonly string[], a: string, b: string) =>
  names.map((n) => `${a}.${n} = ${b}.${n}`).join(' AND ')

/**
 * The CTEs upserting rows into one family of chains (names prefixed with `p`, parameters from $`offset`+1:
 * ident…, hour, payload), linking new hours in, and the query of the moves of last active hours they make,
 * per scope.
 *
 * A new hour goes between its entity's existing hours just before (pred) and after (succ) it: it points
 * to the next new hour or succ, whichever comes first, and pred now points to the first new hour after
 * it. pred was the last hour exactly when there is no succ. One probe finds both: the entity's hour at or
 * before the new one is either that hour's own row or pred, whose next is succ.
 */
function linkHours(spec: Chains, p: string, offset: number): { ctes: string; deltas: string } {
  const { table, ident, entity, key, scope, payload } = spec
  const v = payload.column
  const arrays = [...spec.types, 'timestamptz', payload.type].map((t, i) => `$${offset + i + 1}::${t}[]`)
  const ctes = `${p}input AS (
       SELECT i.*, t.hour AS found, t.${v} AS found_${v}, t.next_hour AS found_next
         FROM unnest(${arrays.join(', ')}) AS i(${cols(ident)}, hour, ${v})
         LEFT JOIN LATERAL (
           SELECT t.hour, t.${v}, t.next_hour FROM ${table} t WHERE ${same(entity, 't', 'i')} AND t.hour <= i.hour
            ORDER BY t.hour DESC LIMIT 1
         ) t ON true
     ),
     ${p}fresh AS (
       SELECT ${cols(ident, 'i.')}, i.hour, i.${v}, i.found AS pred,
              CASE WHEN i.found IS NULL
                   THEN (SELECT min(t.hour) FROM ${table} t WHERE ${same(entity, 't', 'i')} AND t.hour > i.hour)
                   ELSE i.found_next END AS succ
         FROM ${p}input i WHERE i.found IS DISTINCT FROM i.hour
     ),
     ${p}linked AS (
       SELECT f.*, least(lead(f.hour) OVER (PARTITION BY ${cols(entity, 'f.')} ORDER BY f.hour), f.succ) AS next_hour
         FROM ${p}fresh f
     ),
     ${p}preds AS (
       SELECT ${cols(ident)}, pred AS hour, min(hour) AS next_hour, bool_or(succ IS NULL) AS was_last
         FROM ${p}fresh WHERE pred IS NOT NULL GROUP BY ${cols(ident)}, pred
     ),
     ${p}upserted AS (
       INSERT INTO ${table} AS t (${cols(ident)}, hour, ${v}, next_hour)
       SELECT ${cols(ident)}, hour, ${v}, next_hour FROM ${p}linked
       UNION ALL
       SELECT ${cols(ident)}, hour, coalesce(p.${v}, ${payload.none}), coalesce(q.next_hour, p.old_next)
         FROM (SELECT ${cols(ident)}, hour, ${v}, found_next AS old_next FROM ${p}input WHERE found = hour) p
              FULL JOIN ${p}preds q USING (${cols(ident)}, hour)
       ON CONFLICT (${cols(key)}, hour) DO UPDATE
         SET ${v} = ${payload.merge}, next_hour = EXCLUDED.next_hour
         WHERE t.${v} IS DISTINCT FROM ${payload.merge} OR t.next_hour IS DISTINCT FROM EXCLUDED.next_hour
     )`
  const deltas = `SELECT ${cols(scope)}, hour, sum(delta)::int AS delta
       FROM (SELECT ${cols(scope)}, hour, 1 AS delta FROM ${p}linked WHERE next_hour IS NULL
             UNION ALL
             SELECT ${cols(scope)}, hour, -1 FROM ${p}preds WHERE was_last) d
      GROUP BY ${cols(scope)}, hour HAVING sum(delta) <> 0`
  return { ctes, deltas }
}

/**
 * Upserts activity rows (one per chatbot, hour and conversation), linking new hours into their
 * conversation's chain, and locks the end users they name (as lockEndUsers does) for the statement that
 * links those users' hours next. Returns the moves of last active conversation hours (per chatbot), and
 * the changes to end users' activity rows (a new row, or a row whose end user changed). No lock on the
 * conversation: its events are applied by one consumer, in order (and its rm_conversations row is locked
 * by then).
 */
export async function upsertActivity(
  client: pg.ClientBase,
  rows: readonly ActivityRow[],
): Promise<{ lastActive: LastActiveDelta[]; users: UserHourDelta[] }> {
  const { ctes, deltas } = linkHours(CONVERSATIONS, '', 0)
  const { rows: out } = await client.query<DeltaRow & { kind: 'conversation' | 'user'; end_user_id: string }>(
    {
      name: 'cas-rollups-activity',
      text: `WITH ${ctes},
     locked AS (${lockSql('SELECT org_id, end_user_id FROM input WHERE end_user_id IS NOT NULL')}),
     replaced AS (
       SELECT org_id, chatbot_id, hour, end_user_id AS given, found_end_user_id AS old FROM input
        WHERE found = hour AND end_user_id IS DISTINCT FROM found_end_user_id AND end_user_id IS NOT NULL
     )
     SELECT 'conversation' AS kind, org_id, chatbot_id, hour, NULL AS end_user_id, delta FROM (${deltas}) c
     UNION ALL
     SELECT 'user', org_id, chatbot_id, hour, end_user_id, sum(delta)::int
       FROM (SELECT org_id, chatbot_id, hour, end_user_id, 1 AS delta FROM linked WHERE end_user_id IS NOT NULL
             UNION ALL
             SELECT org_id, chatbot_id, hour, given, 1 FROM replaced
             UNION ALL
             SELECT org_id, chatbot_id, hour, old, -1 FROM replaced WHERE old IS NOT NULL) u
      GROUP BY org_id, chatbot_id, hour, end_user_id HAVING sum(delta) <> 0`,
      values: [
        rows.map((r) => r.orgId),
        rows.map((r) => r.chatbotId),
        rows.map((r) => r.conversationId),
        rows.map((r) => r.hour),
        rows.map((r) => r.endUserId),
      ],
    },
  )
  return {
    lastActive: lastActive(out.filter((r) => r.kind === 'conversation')),
    users: out
      .filter((r) => r.kind === 'user')
      .map((r) => ({
        orgId: r.org_id,
        chatbotId: r.chatbot_id as string,
        endUserId: r.end_user_id,
        hour: r.hour.toISOString(),
        delta: r.delta,
      })),
  }
}

/** `unnest` of the identity columns, the hour and n, parameters $1…: (ident…, hour, n). */
function inputOf(spec: Chains): string {
  const arrays = [...spec.types, 'timestamptz', 'int'].map((t, i) => `$${i + 1}::${t}[]`)
  return `SELECT * FROM unnest(${arrays.join(', ')}) AS i(${cols(spec.ident)}, hour, n)`
}

function paramsOf(spec: Chains, rows: readonly UserHourRow[]): unknown[] {
  const column = (name: string) =>
    rows.map((r) => (name === 'org_id' ? r.orgId : name === 'chatbot_id' ? r.chatbotId : r.endUserId))
  return [...spec.ident.map(column), rows.map((r) => r.hour), rows.map((r) => r.n)]
}

interface UserHourRow {
  orgId: string
  chatbotId: string | null
  endUserId: string
  hour: string
  n: number
}

function scopeOf(spec: Chains, rows: DeltaRow[]): LastActiveDelta[] {
  return lastActive(spec.scope.includes('chatbot_id') ? rows : rows.map((r) => ({ ...r, chatbot_id: null })))
}

/** Adds activity rows to both tables of end users' hours, in one statement. */
async function addBothUserHours(
  client: pg.ClientBase,
  perChatbot: readonly UserHourRow[],
  perOrg: readonly UserHourRow[],
): Promise<LastActiveDelta[]> {
  if (perChatbot.length === 0 && perOrg.length === 0) return []
  const chatbot = linkHours(CHATBOT_USERS, 'c_', 0)
  const org = linkHours(ORG_USERS, 'o_', CHATBOT_USERS.ident.length + 2)
  const { rows } = await client.query<DeltaRow>({
    name: 'cas-rollups-user-hours',
    text: `WITH ${chatbot.ctes}, ${org.ctes}
     SELECT org_id, chatbot_id, hour, delta FROM (${chatbot.deltas}) c
     UNION ALL
     SELECT org_id, NULL, hour, delta FROM (${org.deltas}) o`,
    values: [...paramsOf(CHATBOT_USERS, perChatbot), ...paramsOf(ORG_USERS, perOrg)],
  })
  return lastActive(rows)
}

/**
 * Takes n activity rows away from end users' hours: an hour left with none goes, and the chains of the
 * users concerned are relinked from what remains (rare: erasure, a deleted chatbot, an end user replaced
 * within an hour). `input` is a query of (ident…, hour, n) with its parameters; `affected` one of the
 * users concerned (entity columns), with the same parameters.
 */
async function removeUserHours(
  client: pg.ClientBase,
  spec: Chains,
  input: string,
  affected: string,
  params: unknown[],
): Promise<LastActiveDelta[]> {
  const { table, ident, entity, scope } = spec
  // One statement for both: the rows they change are disjoint.
  const { rows: gone } = await client.query<DeltaRow>(
    `WITH input AS (${input}),
     gone AS (
       DELETE FROM ${table} t USING input i
        WHERE ${same(entity, 't', 'i')} AND t.hour = i.hour AND t.conversations <= i.n
       RETURNING t.*
     ),
     kept AS (
       UPDATE ${table} t SET conversations = t.conversations - i.n FROM input i
        WHERE ${same(entity, 't', 'i')} AND t.hour = i.hour AND t.conversations > i.n
     )
     SELECT ${cols(scope)}, hour, -count(*)::int AS delta FROM gone WHERE next_hour IS NULL
      GROUP BY ${cols(scope)}, hour`,
    params,
  )
  const { rows: relinked } = await client.query<DeltaRow>(
    `WITH affected AS (${affected}),
     chain AS (
       SELECT ${cols(ident, 't.')}, t.hour, t.next_hour AS old_next,
              lead(t.hour) OVER (PARTITION BY ${cols(entity, 't.')} ORDER BY t.hour) AS new_next
         FROM ${table} t JOIN affected a ON ${same(entity, 't', 'a')}
     ),
     relinked AS (
       UPDATE ${table} t SET next_hour = c.new_next FROM chain c
        WHERE ${same(entity, 't', 'c')} AND t.hour = c.hour AND c.old_next IS DISTINCT FROM c.new_next
     )
     SELECT ${cols(scope)}, hour, sum((new_next IS NULL)::int - (old_next IS NULL)::int)::int AS delta
       FROM chain GROUP BY ${cols(scope)}, hour
     HAVING sum((new_next IS NULL)::int - (old_next IS NULL)::int) <> 0`,
    params,
  )
  return scopeOf(spec, [...gone, ...relinked])
}

/** removeUserHours of the rows given. */
function removeRows(client: pg.ClientBase, spec: Chains, rows: readonly UserHourRow[]) {
  if (rows.length === 0) return Promise.resolve([])
  const input = inputOf(spec)
  return removeUserHours(
    client,
    spec,
    input,
    `SELECT DISTINCT ${cols(spec.entity)} FROM (${input}) i`,
    paramsOf(spec, rows),
  )
}

/**
 * Applies changes to end users' activity rows (per chatbot and hour) to both tables of their hours.
 * Removals first, so that additions link into chains already relinked. The users must be locked.
 */
export async function applyUserHourDeltas(
  client: pg.ClientBase,
  deltas: readonly UserHourDelta[],
): Promise<LastActiveDelta[]> {
  const perOrg = new Map<string, UserHourRow>()
  for (const d of deltas) {
    const key = `${d.orgId}|${d.endUserId}|${d.hour}`
    const row = perOrg.get(key) ?? {
      orgId: d.orgId,
      chatbotId: null,
      endUserId: d.endUserId,
      hour: d.hour,
      n: 0,
    }
    row.n += d.delta
    perOrg.set(key, row)
  }
  const perChatbot: UserHourRow[] = deltas.map((d) => ({ ...d, n: d.delta }))
  const orgRows = [...perOrg.values()]
  const taken = (rows: UserHourRow[]) => rows.filter((r) => r.n < 0).map((r) => ({ ...r, n: -r.n }))
  const out = [
    ...(await removeRows(client, CHATBOT_USERS, taken(perChatbot))),
    ...(await removeRows(client, ORG_USERS, taken(orgRows))),
    ...(await addBothUserHours(
      client,
      perChatbot.filter((r) => r.n > 0),
      orgRows.filter((r) => r.n > 0),
    )),
  ]
  const forgotten = taken(orgRows)
  if (forgotten.length > 0)
    await client.query(forgetSql(GIVEN_USERS), [
      forgotten.map((u) => u.orgId),
      forgotten.map((u) => u.endUserId),
    ])
  return out
}

/**
 * Takes an erased conversation's activity rows away: its last active hour stops counting, and its end
 * users lose those hours. Returns the moves of last active hours.
 */
export async function eraseActivity(
  client: pg.ClientBase,
  conversationId: string,
): Promise<{ conversations: LastActiveDelta[]; users: LastActiveDelta[] }> {
  const { rows } = await client.query<{
    org_id: string
    chatbot_id: string
    hour: Date
    end_user_id: string | null
    next_hour: Date | null
  }>(
    'DELETE FROM rm_hourly_activity WHERE conversation_id = $1 RETURNING org_id, chatbot_id, hour, end_user_id, next_hour',
    [conversationId],
  )
  const conversations: LastActiveDelta[] = rows
    .filter((r) => r.next_hour === null)
    .map((r) => ({ orgId: r.org_id, chatbotId: r.chatbot_id, hour: r.hour.toISOString(), delta: -1 }))
  const users = rows
    .filter((r) => r.end_user_id !== null)
    .map((r) => ({
      orgId: r.org_id,
      chatbotId: r.chatbot_id,
      endUserId: r.end_user_id as string,
      hour: r.hour.toISOString(),
      delta: -1,
    }))
  await lockEndUsers(client, users)
  return { conversations, users: await applyUserHourDeltas(client, users) }
}

/**
 * Before a chatbot's rows are deleted: takes its activity out of the organization's end users' hours and
 * returns the moves of the organization's last active user hours. (Its conversations, and its own tables,
 * go with the chatbot.)
 */
export async function removeChatbotUsers(
  client: pg.ClientBase,
  chatbotId: string,
): Promise<LastActiveDelta[]> {
  const users = `SELECT DISTINCT org_id, end_user_id FROM rm_hourly_activity
                  WHERE chatbot_id = $1 AND end_user_id IS NOT NULL`
  await client.query(lockSql(users), [chatbotId])
  const deltas = await removeUserHours(
    client,
    ORG_USERS,
    `SELECT org_id, end_user_id, hour, count(*)::int AS n FROM rm_hourly_activity
      WHERE chatbot_id = $1 AND end_user_id IS NOT NULL GROUP BY org_id, end_user_id, hour`,
    users,
    [chatbotId],
  )
  await client.query(forgetSql(users), [chatbotId])
  return deltas
}
