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
 * Keeping it means, when an hour is added (out of order too), linking it between its neighbours, and
 * when hours go (erasure, a deleted chatbot, an end user replaced within an hour), relinking what
 * remains; each change of "which row is last" moves one count from an hour to another.
 *
 * Every function runs inside the projector's transaction. End users are shared between conversations,
 * so between projector instances: their rows in rm_org_end_users are locked, in one order, before their
 * hours are linked (upsertActivity locks the users it names; the other paths call lockEndUsers). Hot
 * statements are prepared (named): a batch runs each once, and planning them cost more than running them. */

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
 * Locks the organizations' end users (their rm_org_end_users rows, created if new), in one order, so that
 * two transactions relinking the same user's hours wait for each other rather than interleave.
 */
export async function lockEndUsers(
  client: pg.ClientBase,
  users: readonly { orgId: string; endUserId: string }[],
): Promise<void> {
  if (users.length === 0) return
  // DO UPDATE … WHERE false locks each existing row without writing it.
  await client.query(
    `INSERT INTO rm_org_end_users AS u (org_id, end_user_id)
     SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[]) ORDER BY 1, 2
     ON CONFLICT (org_id, end_user_id) DO UPDATE SET end_user_id = EXCLUDED.end_user_id WHERE false`,
    [users.map((u) => u.orgId), users.map((u) => u.endUserId)],
  )
}

/** End users whose last hours went (erasure, deletion) stop being end users of the organization. */
async function forgetEndUsers(
  client: pg.ClientBase,
  users: readonly { orgId: string; endUserId: string }[],
): Promise<void> {
  if (users.length === 0) return
  await client.query(
    `DELETE FROM rm_org_end_users u USING unnest($1::uuid[], $2::text[]) AS g(org_id, end_user_id)
      WHERE (u.org_id, u.end_user_id) = (g.org_id, g.end_user_id)
        AND NOT EXISTS (SELECT FROM rm_org_user_hours h WHERE (h.org_id, h.end_user_id) = (g.org_id, g.end_user_id))`,
    [users.map((u) => u.orgId), users.map((u) => u.endUserId)],
  )
}

/**
 * Upserts activity rows (one per chatbot, hour and conversation), linking new hours into their
 * conversation's chain, and locks the end users they name (as lockEndUsers does) for the statement that
 * links those users' hours next. Returns the moves of last active conversation hours (per chatbot), and
 * the changes to end users' activity rows (a new row, or a row whose end user changed: a later capture in
 * the same hour carrying another end user replaces it, as before).
 *
 * A new hour goes between the conversation's existing hours just before (pred) and after (succ) it: it
 * points to the next new hour or succ, whichever comes first, and pred now points to the first new hour
 * after it. pred was the last hour exactly when there is no succ. No lock: a conversation's events are
 * applied by one consumer, in order (and its rm_conversations row is locked by then).
 */
export async function upsertActivity(
  client: pg.ClientBase,
  rows: readonly ActivityRow[],
): Promise<{ lastActive: LastActiveDelta[]; users: UserHourDelta[] }> {
  const { rows: out } = await client.query<DeltaRow & { kind: 'conversation' | 'user'; end_user_id: string }>(
    {
      name: 'cas-rollups-activity',
      text: `WITH input AS (
       -- One probe: the conversation's hour at or before this one is either this hour's row or the row
       -- before it (pred), whose next is the row after it (succ).
       SELECT i.*, a.hour AS found, a.end_user_id AS found_user, a.next_hour AS found_next
         FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[])
                AS i(org_id, chatbot_id, hour, conversation_id, end_user_id)
         LEFT JOIN LATERAL (
           SELECT a.hour, a.end_user_id, a.next_hour FROM rm_hourly_activity a
            WHERE a.conversation_id = i.conversation_id AND a.hour <= i.hour ORDER BY a.hour DESC LIMIT 1
         ) a ON true
     ),
     -- The end users named, locked for the statement linking their hours (lockEndUsers).
     locked AS (
       INSERT INTO rm_org_end_users AS u (org_id, end_user_id)
       SELECT DISTINCT org_id, end_user_id FROM input WHERE end_user_id IS NOT NULL ORDER BY 1, 2
       ON CONFLICT (org_id, end_user_id) DO UPDATE SET end_user_id = EXCLUDED.end_user_id WHERE false
     ),
     prior AS (
       SELECT org_id, chatbot_id, hour, conversation_id, end_user_id AS given_user, found_user AS old_user,
              found_next AS old_next
         FROM input WHERE found = hour
     ),
     fresh AS (
       SELECT i.org_id, i.chatbot_id, i.hour, i.conversation_id, i.end_user_id, i.found AS pred,
              CASE WHEN i.found IS NULL
                   THEN (SELECT min(a.hour) FROM rm_hourly_activity a
                          WHERE a.conversation_id = i.conversation_id AND a.hour > i.hour)
                   ELSE i.found_next END AS succ
         FROM input i WHERE i.found IS DISTINCT FROM i.hour
     ),
     linked AS (
       SELECT f.*, least(lead(f.hour) OVER (PARTITION BY f.conversation_id ORDER BY f.hour), f.succ) AS next_hour
         FROM fresh f
     ),
     preds AS (
       SELECT org_id, chatbot_id, conversation_id, pred AS hour, min(hour) AS next_hour,
              bool_or(succ IS NULL) AS was_last
         FROM fresh WHERE pred IS NOT NULL GROUP BY 1, 2, 3, 4
     ),
     upserted AS (
       INSERT INTO rm_hourly_activity AS a (org_id, chatbot_id, hour, conversation_id, end_user_id, next_hour)
       SELECT org_id, chatbot_id, hour, conversation_id, end_user_id, next_hour FROM linked
       UNION ALL
       SELECT coalesce(p.org_id, q.org_id), chatbot_id, hour, conversation_id, p.given_user,
              coalesce(q.next_hour, p.old_next)
         FROM prior p FULL JOIN preds q USING (chatbot_id, hour, conversation_id)
       ON CONFLICT (chatbot_id, hour, conversation_id) DO UPDATE
         SET end_user_id = coalesce(EXCLUDED.end_user_id, a.end_user_id), next_hour = EXCLUDED.next_hour
         WHERE a.end_user_id IS DISTINCT FROM coalesce(EXCLUDED.end_user_id, a.end_user_id)
            OR a.next_hour IS DISTINCT FROM EXCLUDED.next_hour
     )
     SELECT 'conversation' AS kind, org_id, chatbot_id, hour, NULL AS end_user_id, sum(delta)::int AS delta
       FROM (SELECT org_id, chatbot_id, hour, 1 AS delta FROM linked WHERE next_hour IS NULL
             UNION ALL
             SELECT org_id, chatbot_id, hour, -1 FROM preds WHERE was_last) c
      GROUP BY org_id, chatbot_id, hour HAVING sum(delta) <> 0
     UNION ALL
     SELECT 'user', org_id, chatbot_id, hour, end_user_id, sum(delta)::int
       FROM (SELECT org_id, chatbot_id, hour, end_user_id, 1 AS delta FROM linked WHERE end_user_id IS NOT NULL
             UNION ALL
             SELECT org_id, chatbot_id, hour, given_user, 1 FROM prior
              WHERE given_user IS DISTINCT FROM old_user AND given_user IS NOT NULL
             UNION ALL
             SELECT org_id, chatbot_id, hour, old_user, -1 FROM prior
              WHERE given_user IS DISTINCT FROM old_user AND given_user IS NOT NULL AND old_user IS NOT NULL) u
      GROUP BY org_id, chatbot_id, hour, end_user_id HAVING sum(delta) <> 0`,
      values: [
        rows.map((r) => r.orgId),
        rows.map((r) => r.chatbotId),
        rows.map((r) => r.hour),
        rows.map((r) => r.conversationId),
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

/**
 * The two tables of end users' hours: per chatbot, and per organization. `ident` are the columns naming
 * one user's chain (with org_id, which the chatbot implies), `entity` those of its primary key before the
 * hour, `scope` those the last-active counts are kept by.
 */
interface UserHours {
  readonly table: 'rm_chatbot_user_hours' | 'rm_org_user_hours'
  readonly ident: readonly string[]
  readonly entity: readonly string[]
  readonly scope: readonly string[]
  readonly types: readonly string[]
}

const CHATBOT_USERS: UserHours = {
  table: 'rm_chatbot_user_hours',
  ident: ['org_id', 'chatbot_id', 'end_user_id'],
  entity: ['chatbot_id', 'end_user_id'],
  scope: ['org_id', 'chatbot_id'],
  types: ['uuid', 'uuid', 'text'],
}

const ORG_USERS: UserHours = {
  table: 'rm_org_user_hours',
  ident: ['org_id', 'end_user_id'],
  entity: ['org_id', 'end_user_id'],
  scope: ['org_id'],
  types: ['uuid', 'text'],
}

const cols = (names: readonly string[], alias = '') => names.map((n) => `${alias}${n}`).join(', ')
const same = (names: readonly string[], a: string, b: string) =>
  names.map((n) => `${a}.${n} = ${b}.${n}`).join(' AND ')

/** `unnest` of the identity columns, the hour and n, parameters $1…: (ident…, hour, n). */
function inputOf(spec: UserHours): string {
  const arrays = [...spec.types, 'timestamptz', 'int'].map((t, i) => `$${i + 1}::${t}[]`)
  return `SELECT * FROM unnest(${arrays.join(', ')}) AS i(${cols(spec.ident)}, hour, n)`
}

function paramsOf(spec: UserHours, rows: readonly UserHourRow[]): unknown[] {
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

function scopeOf(spec: UserHours, rows: DeltaRow[]): LastActiveDelta[] {
  return lastActive(spec.scope.includes('chatbot_id') ? rows : rows.map((r) => ({ ...r, chatbot_id: null })))
}

/**
 * The CTEs adding n activity rows to one table of end users' hours (names prefixed with `p`, parameters
 * from $`offset`+1), linking new hours in as upsertActivity does for conversations, and the query of the
 * moves of last active hours they make, per scope.
 */
function addUserHours(spec: UserHours, p: string, offset: number): { ctes: string; deltas: string } {
  const { table, ident, entity, scope } = spec
  const arrays = [...spec.types, 'timestamptz', 'int'].map((t, i) => `$${offset + i + 1}::${t}[]`)
  const ctes = `${p}input AS (
       SELECT i.*, t.hour AS found, t.next_hour AS found_next
         FROM unnest(${arrays.join(', ')}) AS i(${cols(ident)}, hour, n)
         LEFT JOIN LATERAL (
           SELECT t.hour, t.next_hour FROM ${table} t WHERE ${same(entity, 't', 'i')} AND t.hour <= i.hour
            ORDER BY t.hour DESC LIMIT 1
         ) t ON true
     ),
     ${p}fresh AS (
       SELECT ${cols(ident, 'i.')}, i.hour, i.n, i.found AS pred,
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
       INSERT INTO ${table} AS t (${cols(ident)}, hour, conversations, next_hour)
       SELECT ${cols(ident)}, hour, n, next_hour FROM ${p}linked
       UNION ALL
       SELECT ${cols(ident)}, hour, coalesce(p.n, 0), coalesce(q.next_hour, p.old_next)
         FROM (SELECT ${cols(ident)}, hour, n, found_next AS old_next FROM ${p}input WHERE found = hour) p
              FULL JOIN ${p}preds q USING (${cols(ident)}, hour)
       ON CONFLICT (${cols(entity)}, hour) DO UPDATE
         SET conversations = t.conversations + EXCLUDED.conversations, next_hour = EXCLUDED.next_hour
         WHERE EXCLUDED.conversations <> 0 OR t.next_hour IS DISTINCT FROM EXCLUDED.next_hour
     )`
  const deltas = `SELECT ${cols(scope)}, hour, sum(delta)::int AS delta
       FROM (SELECT ${cols(scope)}, hour, 1 AS delta FROM ${p}linked WHERE next_hour IS NULL
             UNION ALL
             SELECT ${cols(scope)}, hour, -1 FROM ${p}preds WHERE was_last) d
      GROUP BY ${cols(scope)}, hour HAVING sum(delta) <> 0`
  return { ctes, deltas }
}

/** Adds activity rows to both tables of end users' hours, in one statement. */
async function addBothUserHours(
  client: pg.ClientBase,
  perChatbot: readonly UserHourRow[],
  perOrg: readonly UserHourRow[],
): Promise<LastActiveDelta[]> {
  if (perChatbot.length === 0 && perOrg.length === 0) return []
  const chatbot = addUserHours(CHATBOT_USERS, 'c_', 0)
  const org = addUserHours(ORG_USERS, 'o_', CHATBOT_USERS.ident.length + 2)
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
  spec: UserHours,
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
function removeRows(client: pg.ClientBase, spec: UserHours, rows: readonly UserHourRow[]) {
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
  await forgetEndUsers(client, taken(orgRows))
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
  orgId: string,
  chatbotId: string,
): Promise<LastActiveDelta[]> {
  const users = `SELECT DISTINCT org_id, end_user_id FROM rm_hourly_activity
                  WHERE chatbot_id = $1 AND end_user_id IS NOT NULL`
  await client.query(
    `INSERT INTO rm_org_end_users AS u (org_id, end_user_id) ${users} ORDER BY 1, 2
     ON CONFLICT (org_id, end_user_id) DO UPDATE SET end_user_id = EXCLUDED.end_user_id WHERE false`,
    [chatbotId],
  )
  const deltas = await removeUserHours(
    client,
    ORG_USERS,
    `SELECT org_id, end_user_id, hour, count(*)::int AS n FROM rm_hourly_activity
      WHERE chatbot_id = $1 AND end_user_id IS NOT NULL GROUP BY org_id, end_user_id, hour`,
    users,
    [chatbotId],
  )
  await client.query(
    `DELETE FROM rm_org_end_users u USING (${users.replace('$1', '$2')}) g
      WHERE u.org_id = $1 AND (u.org_id, u.end_user_id) = (g.org_id, g.end_user_id)
        AND NOT EXISTS (SELECT FROM rm_org_user_hours h WHERE (h.org_id, h.end_user_id) = (u.org_id, u.end_user_id))`,
    [orgId, chatbotId],
  )
  return deltas
}
