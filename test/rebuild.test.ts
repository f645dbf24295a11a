/**
 * Rebuilding the read models from the event log gives, row for row, what the live projector built, in
 * journal and Kafka mode, with the live projector running through the swap; an interrupted rebuild
 * resumes.
 */
import { createPool, withTransaction } from '@cas/db'
import { appendToStream, type EventLogBackend, JOURNAL_TOPIC, listDeadLetters } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import {
  type AbandonedRun,
  READ_MODEL_TABLES,
  RebuildStoppedError,
  rebuildReadModels,
} from '@cas/service-projector/rebuild'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { groupLockKey } from '../services/projector/src/projections/batch-order.ts'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { testKeyring } from './support/keyring.ts'
import { consumerCaughtUp, EVENT_LOG_MODES, startLiveProjector, startPipeline } from './support/pipeline.ts'
import { appendPoisonedConversation } from './support/poison.ts'
import { runReplayCli, startReplayCli } from './support/replay-cli.ts'
import { waitFor, waitUntilBlockedBy } from './support/wait.ts'

/** Every read-model row, as JSON, in a stable order. */
async function snapshot(db: TestDatabase) {
  const tables: Record<string, string[]> = {}
  for (const table of READ_MODEL_TABLES) {
    const { rows } = await db.pool.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM ${table} t`)
    tables[table] = rows.map((r) => r.row).sort()
  }
  return tables
}

/** Captures, metadata changes, a rename, a rotation, analysis and re-analysis (with languages), and a deleted chatbot. */
async function mixedWorkload(app: FastifyInstance, db: TestDatabase) {
  const { cookie, organization } = await signUp(app)
  const bots = [
    await createChatbot(app, cookie, { name: 'kept' }),
    await createChatbot(app, cookie, { name: 'doomed' }),
  ]
  const ids: string[] = []
  for (let i = 0; i < 12; i++) {
    const bot = bots[i % 2]!
    const res = await postCapture(app, bot.apiKey, {
      conversationId: `c-${i % 6}`,
      messages: [
        {
          id: `${i}-u`,
          role: 'user',
          content: `question ${i} about refunds`,
          sentAt: `2026-11-${10 + (i % 5)}T0${i % 9}:00:00Z`,
        },
        {
          id: `${i}-a`,
          role: 'assistant',
          content: `answer ${i}`,
          sentAt: `2026-11-${10 + (i % 5)}T0${i % 9}:00:05Z`,
        },
      ],
      user: { id: `user-${i % 4}`, plan: i % 3 ? 'pro' : 'free' },
      custom: { round: i },
    })
    expect(res.statusCode).toBe(200)
    ids.push(res.json().conversationId)
  }
  const headers = { cookie }
  await app.inject({
    method: 'PATCH',
    url: `/api/v1/chatbots/${bots[0]!.chatbot.id}`,
    headers,
    payload: { name: 'renamed' },
  })
  const rotated = await app.inject({
    method: 'POST',
    url: `/api/v1/chatbots/${bots[0]!.chatbot.id}/rotate-key`,
    headers,
  })
  await postCapture(app, rotated.json().apiKey, {
    conversationId: 'after-rotation',
    messages: [{ id: 'x', role: 'user', content: 'still here', sentAt: '2026-11-15T10:00:00Z' }],
  })
  for (const [i, id] of ids.entries()) {
    const bot = bots[i % 2]!
    const analyze = (score: number, topics: string[], version: string, language: string) =>
      withTransaction(db.pool, (client) =>
        appendToStream(client, {
          streamType: 'analysis',
          streamId: id,
          orgId: organization.id,
          chatbotId: bot.chatbot.id,
          expectedVersion: 'any',
          events: [
            newEvent('analysis.messages-analyzed', {
              analyzer: { name: 'test', version },
              signalsDecided: true,
              results: [
                {
                  messageId: `${i}-u`,
                  sentiment: { score, label: score > 0 ? 'positive' : 'negative' },
                  topics: topics.map((t) => ({ id: t, label: t })),
                  language,
                },
              ],
            }),
            newEvent('analysis.conversation-analyzed', {
              analyzer: { name: 'test', version },
              sentiment: { score, label: score > 0 ? 'positive' : 'negative' },
              assistantSentiment: null,
              topics: topics.map((t) => ({ id: t, label: t })),
            }),
          ],
        }),
      )
    // Binary fractions, so that sums are exact whatever the batching.
    // Languages too (rm_hourly_languages), one changed by the re-analysis.
    await analyze(0.5, ['refunds'], '1', i % 2 ? 'es' : 'en')
    if (i % 3 === 0) await analyze(-0.25, ['billing'], '2', 'fr')
  }
  const del = await app.inject({ method: 'DELETE', url: `/api/v1/chatbots/${bots[1]!.chatbot.id}`, headers })
  expect(del.statusCode).toBe(200)
  return { cookie, apiKey: rotated.json().apiKey as string }
}

/**
 * The pool and event log a rebuild reads its lag through, each lag read first awaiting `hold`: the point a
 * test holds a rebuild's lag read at. In Kafka mode consumerLag opens an admin client before each read of
 * the checkpoints; in journal mode the lag is one count of the journal (journalTotalLag).
 */
function withLagReadsHeld(
  pool: pg.Pool,
  eventLog: EventLogBackend,
  hold: () => Promise<void>,
): { pool: pg.Pool; eventLog: EventLogBackend } {
  if (eventLog.kind === 'journal') {
    const held = new Proxy(pool, {
      get(target, property) {
        if (property === 'query')
          return async (...args: Parameters<pg.Pool['query']>) => {
            if (
              typeof args[0] === 'string' &&
              args[0].startsWith('SELECT count(*)::int AS lag FROM event_journal')
            )
              await hold()
            return (target.query as (...a: unknown[]) => unknown)(...args)
          }
        const value = Reflect.get(target, property, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    return { pool: held, eventLog }
  }
  const kafka = Object.create(eventLog.kafka) as typeof eventLog.kafka
  kafka.admin = (config) => {
    const admin = eventLog.kafka.admin(config)
    // Only consumerLag's (the rebuild's lag read): its consumers open admin clients of their own too.
    if (!new Error().stack?.includes('consumerLag')) return admin
    const connect = admin.connect.bind(admin)
    admin.connect = async () => {
      await hold()
      await connect()
    }
    return admin
  }
  return { pool, eventLog: { ...eventLog, kafka } }
}

/** The schemas rebuilds make (a run's shadow tables, the swap's replaced ones) still in the database. */
async function rebuildSchemas(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ nspname: string }>(
    "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rebuild_%' OR nspname LIKE 'replaced_%' ORDER BY 1",
  )
  return rows.map((r) => r.nspname)
}

/**
 * A newer version's rebuild abandoning the run of `schema` (begun before a migration that added
 * rm_hourly_languages: its shadow copy dropped here) and left replaying its own (stopped before its swap).
 */
async function abandonFromNewer(
  on: { db: TestDatabase; eventLog: EventLogBackend; liveGroupId: string },
  schema: string,
) {
  await on.db.pool.query(`DROP TABLE ${schema}.rm_hourly_languages`)
  const abandoned: AbandonedRun[] = []
  const result = await rebuildReadModels({
    pool: on.db.pool,
    keyring: testKeyring,
    eventLog: on.eventLog,
    liveGroupId: on.liveGroupId,
    stopAfter: 0,
    progressIntervalMs: 10,
    onAbandoned: (left) => abandoned.push(left),
  })
  return { result, abandoned }
}

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`rebuilding the read models, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    async function setUp() {
      const pipeline = await startPipeline(mode.name, cleanups)
      const { db, app, eventLog } = pipeline
      const { groupId: liveGroupId, projector: live } = await startLiveProjector(pipeline, cleanups)
      // Checkpoints, not the projection's rows: they move only once a batch has committed, so a snapshot
      // taken then never catches the projector mid-batch (e.g. between a deletion's statements).
      const caughtUp = () => consumerCaughtUp(pipeline, liveGroupId)
      return { db, app, eventLog, liveGroupId, live, caughtUp }
    }

    /**
     * A run stopped part-way (before its swap) after a first workload, and a second workload since, which
     * the run has not applied; the live projector caught up with both (`before`, its tables then).
     */
    async function interruptedRunAndEventsSince() {
      const pipeline = await setUp()
      const { db, app, eventLog, liveGroupId, caughtUp } = pipeline
      await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up' })
      const interrupted = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId,
        stopAfter: 0,
        progressIntervalMs: 10,
      })
      expect(interrupted.swapped).toBe(false)
      const { rows } = await db.pool.query<{ schema_name: string; group_id: string }>(
        'SELECT schema_name, group_id FROM replay_runs WHERE id = $1',
        [interrupted.runId],
      )
      await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up again' })
      const run = { id: interrupted.runId, schema: rows[0]!.schema_name, group: rows[0]!.group_id }
      return { ...pipeline, run, before: await snapshot(db) }
    }

    it('gives read models identical to the live ones, row for row, swapped in under a running projector', async () => {
      const { db, app, eventLog, liveGroupId, caughtUp } = await setUp()
      const { cookie, apiKey } = await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up', timeoutMs: 30_000 })
      const before = await snapshot(db)
      expect(before.rm_conversations!.length).toBeGreaterThan(0)
      expect(before.rm_hourly_languages!.length).toBeGreaterThan(0)
      // The list's previews (the end users' first messages) are among what the rebuild must give again.
      expect(
        before.rm_conversations!.filter((row) => JSON.parse(row).preview !== null).length,
      ).toBeGreaterThan(0)
      const indexes = () =>
        db.pool
          .query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename LIKE 'rm\\_%' ORDER BY 1",
          )
          .then((r) => r.rows.map((row) => row.indexname))
      const indexesBefore = await indexes()
      const progress: number[] = []
      const result = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId,
        progressIntervalMs: 50,
        onProgress: (p) => progress.push(p.lag),
      })
      expect(result).toMatchObject({ swapped: true, resumed: false })
      expect(result.applied).toBeGreaterThan(0)
      expect(progress.at(-1)).toBe(0)
      expect(await snapshot(db)).toEqual(before)
      expect(await indexes()).toEqual(indexesBefore)
      // The live tables' storage parameters too (`LIKE` copies none): the messages keep room on their
      // pages for the analysis update that follows a capture (migration 0022)
      const { rows: storage } = await db.pool.query(
        "SELECT reloptions FROM pg_class WHERE oid = 'public.rm_messages'::regclass",
      )
      expect(storage).toEqual([{ reloptions: ['fillfactor=50'] }])
      // Analyzed before the swap (by the rebuild itself, not autovacuum): read on statistics at once.
      const { rows: unanalyzed } = await db.pool.query(
        `SELECT relname FROM pg_stat_user_tables
          WHERE schemaname = 'public' AND relname = ANY($1::text[]) AND last_analyze IS NULL`,
        [[...READ_MODEL_TABLES]],
      )
      expect(unanalyzed).toEqual([])
      expect(await rebuildSchemas(db)).toEqual([])
      if (eventLog.kind === 'kafka') {
        // What the run leaves in Kafka: its consumer group, without a member and without a committed offset
        // (positions are checkpoints in Postgres), which the broker deletes at its next offsets cleanup
        // (docs/operations.md, "What a rebuild leaves in Kafka"). A committed offset would keep it for days.
        const { rows: runs } = await db.pool.query<{ group_id: string }>(
          'SELECT group_id FROM replay_runs WHERE id = $1',
          [result.runId],
        )
        const admin = eventLog.kafka.admin()
        await admin.connect()
        try {
          const { groups } = await admin.describeGroups([runs[0]!.group_id])
          expect(
            groups.map((g) => ({ members: g.members.length, gone: ['Empty', 'Dead'].includes(g.state) })),
          ).toEqual([{ members: 0, gone: true }])
          expect(await admin.fetchOffsets({ groupId: runs[0]!.group_id })).toEqual([])
        } finally {
          await admin.disconnect()
        }
      }
      // The live projector carries on, on the new tables; the query role still reads them under RLS.
      const res = await postCapture(app, apiKey, {
        conversationId: 'after-rebuild',
        messages: [{ id: 'new', role: 'user', content: 'hello again' }],
      })
      const read = await app.inject({
        method: 'GET',
        url: `/api/v1/conversations/${res.json().conversationId}`,
        headers: { cookie },
      })
      expect(read.statusCode).toBe(200)
      expect(read.json().conversation.messages.map((m: { id: string }) => m.id)).toEqual(['new'])
    })

    it('sets aside an event it cannot apply, finishes, and hands its dead letters to the live projector', async () => {
      // Regression (issue 30): a replay met the same unappliable event as the live projector and retried it
      // for ever, never reaching the swap.
      const { db, app, eventLog, liveGroupId, caughtUp } = await setUp()
      const { cookie, organization } = await signUp(app)
      const { chatbot, apiKey } = await createChatbot(app, cookie)
      const bad = await appendPoisonedConversation(db.pool, { id: chatbot.id, orgId: organization.id })
      const res = await postCapture(app, apiKey, {
        conversationId: 'fine',
        messages: [{ id: 'u1', role: 'user', content: 'all good' }],
      })
      expect(res.statusCode).toBe(200)
      await waitFor(caughtUp, { what: 'the live projector to pass the bad event', timeoutMs: 45_000 })
      const liveLetters = await listDeadLetters(db.pool, { groupId: liveGroupId })
      expect(liveLetters.map((l) => l.eventId)).toEqual([bad.id])

      const result = await rebuildReadModels({ pool: db.pool, keyring: testKeyring, eventLog, liveGroupId })
      expect(result).toMatchObject({ swapped: true, setAside: 1 })
      const letters = await listDeadLetters(db.pool)
      expect(letters.map((l) => [l.groupId, l.eventId])).toEqual([[liveGroupId, bad.id]])
      // `npm run replay` says so, and ends with exit code 2: swapped in, but not whole (trial8: it said only
      // that it had finished while it set aside every event of a newer version).
      if (eventLog.kind === 'journal') {
        const cli = runReplayCli(['read-models'], db.url)
        expect(cli.status, cli.stderr).toBe(2)
        expect(cli.stdout).toMatch(/finished rebuild \S+: [\d,]+ events applied, read models swapped in/)
        expect(cli.stderr.trim().split('\n')).toEqual([
          'replay: events set aside as dead letters, which the read models lack until they are re-driven or ' +
            'discarded: 1 (npm run dead-letters -- list; docs/operations.md, "Dead letters")',
        ])
      }
      const read = await app.inject({
        method: 'GET',
        url: `/api/v1/conversations/${res.json().conversationId}`,
        headers: { cookie },
      })
      expect(read.statusCode).toBe(200)
    })

    it('swaps in when the live projector still has checkpoints of the other event log (the service ran in the other mode before)', async () => {
      // Regression: `npm run replay -- read-models` after the service had run on the embedded journal and then
      // with KAFKA_BROKERS never swapped: the live group's old journal checkpoints were compared with the
      // rebuild's Kafka ones, found ahead, and it replayed, indexed and tried to swap again, for ever.
      const { db, app, eventLog, liveGroupId, caughtUp } = await setUp()
      await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up' })
      const before = await snapshot(db)
      const stale = eventLog.kind === 'kafka' ? JOURNAL_TOPIC : 'conversation-events'
      await db.pool.query(
        `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset)
         SELECT $1, $2, p, 1000000 FROM generate_series(0, 3) AS p`,
        [liveGroupId, stale],
      )
      const rebuild = rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId,
        progressIntervalMs: 50,
      })
      const result = await Promise.race([
        rebuild,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('the rebuild did not swap within 30 s')), 30_000),
        ),
      ])
      expect(result.swapped).toBe(true)
      expect(await snapshot(db)).toEqual(before)
      const { rows } = await db.pool.query(
        'SELECT count(*)::int AS n FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2',
        [liveGroupId, stale],
      )
      expect(rows[0].n).toBe(0)
    })

    /**
     * A run stopped part-way and events since; an older rebuild (`resume`) resuming it in a process of its
     * own, its next batch held back at the rebuild group's batch-ordering lock before it
     * has touched a table; a newer version's rebuild abandoning that run (a migration since changed its
     * tables) and starting its own (left replaying: stopped before its swap); then the held batch let go.
     */
    async function abandonUnderAnOlderRebuild<T>(
      resume: (on: { db: TestDatabase; eventLog: EventLogBackend; liveGroupId: string }) => Promise<T>,
    ) {
      const { db, eventLog, liveGroupId, run, before } = await interruptedRunAndEventsSince()
      const { schema, group } = run
      const holder = await db.pool.connect()
      try {
        await holder.query('SELECT pg_advisory_lock($1, -1)', [groupLockKey(group)])
        const older = resume({ db, eventLog, liveGroupId })
        await waitUntilBlockedBy(db.pool, holder, { what: 'the older rebuild’s batch to wait at the lock' })
        const { result: newer, abandoned } = await abandonFromNewer({ db, eventLog, liveGroupId }, schema)
        expect(abandoned.map((a) => a.runId)).toEqual([run.id])
        expect(newer).toMatchObject({ resumed: false, swapped: false })
        await holder.query('SELECT pg_advisory_unlock($1, -1)', [groupLockKey(group)])
        return { db, eventLog, liveGroupId, before, group, abandonedRunId: run.id, newer, older }
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()').catch(() => {})
        holder.release()
      }
    }

    /** What is left after: the live tables as before, and nothing of the abandoned run's consumer group. */
    async function expectNothingWrittenBy(
      db: TestDatabase,
      before: Awaited<ReturnType<typeof snapshot>>,
      group: string,
    ) {
      expect(await snapshot(db)).toEqual(before)
      const { rows: kept } = await db.pool.query(
        `SELECT (SELECT count(*) FROM consumer_checkpoints WHERE group_id = $1)::int AS checkpoints,
                (SELECT count(*) FROM consumer_stream_versions WHERE group_id = $1)::int AS versions,
                (SELECT count(*) FROM dead_letters WHERE group_id = $1)::int AS letters`,
        [group],
      )
      expect(kept).toEqual([{ checkpoints: 0, versions: 0, letters: 0 }])
    }

    it('stops an older rebuild still running when a newer one abandons its run, leaving the live tables alone', async () => {
      // Regression (review8): `abandon` dropped the run's schema while another process still ran that run;
      // on `search_path = rebuild_x, public` that process's next batch found no shadow table and wrote the
      // live ones, applying its events again (its checkpoints and stream versions were gone too).
      // Given an older rebuild resuming a run, in a process of its own (its own pool and consumers)
      const { db, eventLog, liveGroupId, before, group, abandonedRunId, newer, older } =
        await abandonUnderAnOlderRebuild(({ db, eventLog, liveGroupId }) => {
          const pool = createPool(db.url, { applicationName: 'older-rebuild' })
          cleanups.push(() => pool.end())
          return rebuildReadModels({
            pool,
            keyring: testKeyring,
            eventLog,
            liveGroupId,
            progressIntervalMs: 10,
          })
            .then((result) => ({ result, error: undefined }))
            .catch((error: Error) => ({ result: undefined, error }))
        })
      // When a newer one has abandoned that run and its held batch goes on
      // Then the older rebuild stops, saying why, having written nothing
      const { result, error } = await older
      expect(result).toBeUndefined()
      expect(error).toBeInstanceOf(RebuildStoppedError)
      expect(error?.message).toBe(
        `rebuild ${abandonedRunId} stopped: abandoned by another rebuild; nothing more applied`,
      )
      await expectNothingWrittenBy(db, before, group)
      // And the newer one, resumed, swaps in what the live projector had built
      const finished = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId,
        progressIntervalMs: 10,
      })
      expect(finished).toMatchObject({ runId: newer.runId, resumed: true, swapped: true })
      expect(await snapshot(db)).toEqual(before)
      const { rows: statuses } = await db.pool.query(
        'SELECT id, status FROM replay_runs ORDER BY started_at, id',
      )
      expect(statuses).toEqual([
        { id: abandonedRunId, status: 'abandoned' },
        { id: newer.runId, status: 'done' },
      ])
    })

    it('stops an older rebuild that had applied everything when a newer one abandons its run before its next lag read', async () => {
      // Regression (Kafka mode): abandoning the run deleted its checkpoints, so the older rebuild's next lag
      // read counted the whole topic, never 0; and with every event applied no batch came to find the run
      // ended: it waited, writing nothing, until a new event was captured. In journal mode its consumers'
      // next poll reads from the deleted checkpoints, the journal's start, and that batch finds the run
      // ended: it stopped so before the check after each lag read, and still does.
      // Given an older rebuild resuming a run, its first lag read after it has applied every event held
      const pipeline = await interruptedRunAndEventsSince()
      const { db, eventLog, liveGroupId, run, before } = pipeline
      let reachedEnd = () => {}
      const reached = new Promise<void>((resolve) => {
        reachedEnd = resolve
      })
      let letGo = () => {}
      const release = new Promise<void>((resolve) => {
        letGo = resolve
      })
      let held = false
      const older = rebuildReadModels({
        ...withLagReadsHeld(db.pool, eventLog, async () => {
          if (held || !(await consumerCaughtUp(pipeline, run.group))) return
          held = true
          reachedEnd()
          await release
        }),
        keyring: testKeyring,
        liveGroupId,
        progressIntervalMs: 10,
      })
        .then((result) => ({ result, error: undefined }))
        .catch((error: Error) => ({ result: undefined, error }))
      await reached
      // When a newer rebuild abandons that run (a migration since changed its tables), then the lag read goes on
      const { result: newer } = await abandonFromNewer({ db, eventLog, liveGroupId }, run.schema)
      expect(newer).toMatchObject({ resumed: false, swapped: false })
      letGo()
      // Then the older rebuild stops, saying why, having written nothing
      const { result, error } = await older
      expect(result).toBeUndefined()
      expect(error).toBeInstanceOf(RebuildStoppedError)
      expect(error?.message).toBe(
        `rebuild ${run.id} stopped: abandoned by another rebuild; nothing more applied`,
      )
      await expectNothingWrittenBy(db, before, run.group)
    })

    if (mode.name !== 'journal') return
    it('runs as `npm run replay -- all` on the database of the service, printing its progress', async () => {
      const { db, app, caughtUp } = await setUp()
      await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up' })
      const before = await snapshot(db)
      const cli = runReplayCli(['all'], db.url)
      expect(cli.status, cli.stderr).toBe(0)
      expect(cli.stdout).toMatch(/replaying: [\d,]+ events applied, [\d,]+\/s, lag [\d,]+, ETA/)
      expect(cli.stdout).toMatch(/finished rebuild \S+: [\d,]+ events applied, read models swapped in/)
      expect(await snapshot(db)).toEqual(before)
      const usage = runReplayCli(['nonsense'])
      expect(usage.status).toBe(64)
      expect(usage.stderr).toContain('usage: npm run replay -- <read-models|all>')
    })

    it('stops `npm run replay` still running an older rebuild when a newer one abandons its run: exit code 1, one line', async () => {
      // Given `npm run replay` resuming a run, its next batch held back
      const { db, before, group, abandonedRunId, older } = await abandonUnderAnOlderRebuild(({ db }) =>
        startReplayCli(['read-models'], db.url),
      )
      // When a newer rebuild has abandoned that run and the batch goes on
      // Then the CLI ends with exit code 1 and says why on stderr, without a stack trace
      const cli = await older
      expect(cli.status).toBe(1)
      expect(cli.stderr.trim().split('\n')).toEqual([
        `replay: rebuild ${abandonedRunId} stopped: abandoned by another rebuild; nothing more applied`,
      ])
      expect(cli.stdout).not.toContain('swapped in')
      await expectNothingWrittenBy(db, before, group)
    })

    /**
     * An older rebuild resuming a run, held in its first index build of the run (by a writer of the shadow
     * tables), and `npm run replay` of a newer version abandoning that run (a check constraint added since),
     * its drop of the run's schema waiting for the build; then the writer ends. The build goes on and waits
     * for every transaction older than its snapshot, the drop's among them, while the drop waits for it:
     * PostgreSQL ends one of the two as a deadlock. Which one: the first to look for a deadlock, after its
     * session's `deadlock_timeout` (given to each here) has passed since it began to wait. (Snapshots are the
     * cluster's: a transaction of another test's database older than the drop and still running when the
     * build takes its snapshot spares the drop the build's wait, and no deadlock forms. The outcome asserted
     * is the same; that is not asserted, so that a test running beside this one cannot fail it. On an idle
     * server pg_stat_database.deadlocks rose in each of five runs of each test, three of them at once.)
     */
    async function abandonDuringIndexBuild(deadlockTimeout: { older: string; newer: string }) {
      const { db, eventLog, liveGroupId, run } = await interruptedRunAndEventsSince()
      const olderUrl = new URL(db.url)
      olderUrl.searchParams.set('options', `-c deadlock_timeout=${deadlockTimeout.older}`)
      const olderPool = createPool(olderUrl.toString(), { applicationName: 'older-rebuild' })
      cleanups.push(() => olderPool.end())
      const holder = await db.pool.connect()
      let older: Promise<unknown> | undefined
      let cli: Awaited<ReturnType<typeof startReplayCli>>
      try {
        await holder.query('BEGIN')
        for (const table of READ_MODEL_TABLES)
          await holder.query(`LOCK TABLE ${run.schema}.${table} IN ROW EXCLUSIVE MODE`)
        older = rebuildReadModels({ pool: olderPool, keyring: testKeyring, eventLog, liveGroupId }).catch(
          (error: Error) => error,
        )
        await waitUntilBlockedBy(db.pool, holder, {
          statement: 'CREATE INDEX CONCURRENTLY',
          what: 'the older rebuild’s index build to wait for the writer',
        })
        await db.pool.query('ALTER TABLE rm_hourly_languages ADD CONSTRAINT probe CHECK (messages >= 0)')
        const newer = startReplayCli(['read-models'], db.url, {
          PGOPTIONS: `-c deadlock_timeout=${deadlockTimeout.newer}`,
        })
        await waitUntilBlockedBy(db.pool, holder, {
          statement: 'DROP SCHEMA',
          what: 'the newer rebuild’s drop to wait for the writer and the index build',
        })
        await holder.query('COMMIT')
        cli = await newer
      } finally {
        await holder.query('ROLLBACK').catch(() => {})
        holder.release()
      }
      return { db, run, older: await older, cli }
    }

    async function expectOlderStoppedAndNewerSwappedIn({
      db,
      run,
      older,
      cli,
    }: Awaited<ReturnType<typeof abandonDuringIndexBuild>>) {
      expect(older).toBeInstanceOf(RebuildStoppedError)
      expect((older as Error).message).toBe(
        `rebuild ${run.id} stopped: abandoned by another rebuild; nothing more applied`,
      )
      expect(cli.status, cli.stderr).toBe(0)
      expect(cli.stdout).toContain(`abandoned rebuild ${run.id}, starting afresh`)
      expect(cli.stdout).toMatch(/finished rebuild \S+: [\d,]+ events applied, read models swapped in/)
      const { rows } = await db.pool.query('SELECT id, status FROM replay_runs ORDER BY started_at, id')
      expect(rows).toEqual([
        { id: run.id, status: 'abandoned' },
        { id: expect.any(String), status: 'done' },
      ])
      expect(await rebuildSchemas(db)).toEqual([])
    }

    it('finishes `npm run replay` abandoning a run whose index an older rebuild builds, when its drop is the deadlock’s victim', async () => {
      // The drop is run again (withTransaction), younger then than the build, which no longer waits for it.
      const outcome = await abandonDuringIndexBuild({ older: '20s', newer: '5s' })
      await expectOlderStoppedAndNewerSwappedIn(outcome)
    })

    it('stops an older rebuild building an index of a run `npm run replay` abandons, when its build is the deadlock’s victim', async () => {
      // Regression: the build's failure was explained by the run's status, still running until the
      // abandonment's one transaction committed: the older rebuild failed with a raw deadlock error.
      const outcome = await abandonDuringIndexBuild({ older: '200ms', newer: '60s' })
      await expectOlderStoppedAndNewerSwappedIn(outcome)
    })

    it('drops the schema of an abandoned run left behind, before it starts', async () => {
      // Given a run marked abandoned whose schema is still there (its abandoner ended between its two
      // transactions)
      const { db, eventLog, liveGroupId, run } = await interruptedRunAndEventsSince()
      await db.pool.query("UPDATE replay_runs SET status = 'abandoned', finished_at = now() WHERE id = $1", [
        run.id,
      ])
      // When a rebuild starts
      const result = await rebuildReadModels({ pool: db.pool, keyring: testKeyring, eventLog, liveGroupId })
      // Then it starts afresh and drops that schema
      expect(result).toMatchObject({ resumed: false, swapped: true })
      const { rows } = await db.pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [run.schema])
      expect(rows).toEqual([])
    })

    it('hands the rebuilt tables to a live projector of several journal partitions, each continuing', async () => {
      const base = await startPipeline(mode.name, cleanups)
      const pipeline = { ...base, eventLog: { kind: 'journal' as const, pollIntervalMs: 5, partitions: 3 } }
      const { db, app } = pipeline
      const { groupId: liveGroupId } = await startLiveProjector(pipeline, cleanups)
      const caughtUp = () => consumerCaughtUp(pipeline, liveGroupId)
      const { cookie, apiKey } = await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up' })
      const before = await snapshot(db)
      const result = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog: pipeline.eventLog,
        liveGroupId,
        progressIntervalMs: 50,
      })
      expect(result.swapped).toBe(true)
      expect(await snapshot(db)).toEqual(before)
      const { rows } = await db.pool.query(
        'SELECT partition FROM consumer_checkpoints WHERE group_id = $1 ORDER BY 1',
        [liveGroupId],
      )
      expect(rows.map((r) => r.partition)).toEqual([0, 1, 2])
      // Conversations hashed onto every partition are projected on the new tables.
      const ids: string[] = []
      for (let i = 0; i < 9; i++) {
        const res = await postCapture(app, apiKey, {
          conversationId: `after-${i}`,
          messages: [{ id: 'new', role: 'user', content: `hello ${i}` }],
        })
        ids.push(res.json().conversationId)
      }
      await waitFor(caughtUp, { what: 'the live projector to catch up again' })
      for (const id of ids) {
        const read = await app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${id}`,
          headers: { cookie },
        })
        expect(read.statusCode).toBe(200)
        expect(read.json().conversation.messages.map((m: { id: string }) => m.id)).toEqual(['new'])
      }
    })

    it('resumes a rebuild that stopped before swapping', async () => {
      const { db, app, eventLog, liveGroupId, caughtUp } = await setUp()
      await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up' })
      const before = await snapshot(db)
      const interrupted = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId,
        stopAfter: 1,
        progressIntervalMs: 10,
      })
      expect(interrupted.swapped).toBe(false)
      const resumed = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId,
        progressIntervalMs: 50,
      })
      expect(resumed).toMatchObject({ runId: interrupted.runId, resumed: true, swapped: true })
      expect(await snapshot(db)).toEqual(before)
    })

    it('starts afresh, leaving the live tables alone, when the run it would resume lacks a table a migration added', async () => {
      // Regression (review7): a rebuild left running before migration 0061 had no shadow rm_hourly_languages;
      // resumed with `search_path = rebuild_x, public`, it wrote language counts into the live table (doubling
      // them), and its swap then failed.
      // Given a run stopped part-way, and events since (the service upgraded and ran on), which that run has
      // not applied
      const { db, eventLog, liveGroupId, run: interrupted, before } = await interruptedRunAndEventsSince()
      // And the run begun before the migration that added rm_hourly_languages
      await db.pool.query(`DROP TABLE ${interrupted.schema}.rm_hourly_languages`)
      const liveLanguages = () =>
        db.pool
          .query<{ row: string }>('SELECT to_jsonb(t)::text AS row FROM public.rm_hourly_languages t')
          .then((r) => r.rows.map((row) => row.row).sort())
      // When the rebuild is run again
      const seen: Promise<string[]>[] = []
      const abandoned: { runId: string; reason: string }[] = []
      const result = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId,
        progressIntervalMs: 10,
        onAbandoned: (run: { runId: string; reason: string }) => abandoned.push(run),
        onProgress: (p) => {
          if (p.phase === 'replaying') seen.push(liveLanguages())
        },
      })
      // Then it abandons that run, saying why, and starts afresh
      expect(abandoned).toEqual([
        { runId: interrupted.id, reason: expect.stringContaining('rm_hourly_languages') },
      ])
      expect(result).toMatchObject({ resumed: false, swapped: true })
      expect(result.runId).not.toBe(interrupted.id)
      // The live table was left alone while it replayed
      expect(seen.length).toBeGreaterThan(0)
      for (const rows of await Promise.all(seen)) expect(rows).toEqual(before.rm_hourly_languages)
      // And what it swapped in is what the live projector had built
      expect(await snapshot(db)).toEqual(before)
      const { rows: statuses } = await db.pool.query(
        'SELECT id, status, finished_at IS NOT NULL AS finished FROM replay_runs ORDER BY started_at, id',
      )
      expect(statuses).toEqual([
        { id: interrupted.id, status: 'abandoned', finished: true },
        { id: result.runId, status: 'done', finished: true },
      ])
      expect(await rebuildSchemas(db)).toEqual([])
    })

    // The swap hands the live projector's stream versions over (a row per stream: seconds on a large
    // deployment) before it moves the tables, from when on every read waits for it to commit.
    it('keeps the read models readable while the swap hands the stream versions over', async () => {
      const { db, app, eventLog, liveGroupId, caughtUp } = await setUp()
      await mixedWorkload(app, db)
      await waitFor(caughtUp, { what: 'the live projector to catch up' })
      const before = await snapshot(db)
      // Holds one of the live group's stream versions, so that the swap waits at its hand-over.
      const holder = await db.pool.connect()
      const reader = await db.pool.connect()
      try {
        await holder.query('BEGIN')
        const held = await holder.query(
          'SELECT 1 FROM consumer_stream_versions WHERE group_id = $1 LIMIT 1 FOR UPDATE',
          [liveGroupId],
        )
        expect(held.rowCount).toBe(1)
        const rebuilt = rebuildReadModels({ pool: db.pool, keyring: testKeyring, eventLog, liveGroupId })
        await waitUntilBlockedBy(db.pool, holder, {
          count: 1,
          statement: 'DELETE FROM consumer_stream_versions',
          what: 'the swap to wait at the stream versions',
        })
        await reader.query("SET lock_timeout TO '2s'")
        const { rows } = await reader.query<{ n: number }>('SELECT count(*)::int AS n FROM rm_conversations')
        expect(rows[0]!.n).toBe(before.rm_conversations!.length)
        await reader.query('RESET lock_timeout')
        await holder.query('ROLLBACK')
        expect(await rebuilt).toMatchObject({ swapped: true })
        expect(await snapshot(db)).toEqual(before)
      } finally {
        await holder.query('ROLLBACK').catch(() => {})
        holder.release()
        reader.release()
      }
    })
  })
}
