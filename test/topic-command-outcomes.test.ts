import { randomUUID } from 'node:crypto'
import { newEvent } from '@cas/events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ScriptedAnalyzer } from '../services/analysis/test/scripted-analyzer.ts'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { journalEvents } from './support/journal.ts'
import { commitTopicCommand } from './support/topic-commands.ts'
import { waitFor } from './support/wait.ts'

// Every topic command gets an outcome (issue 31, item 6), analysis.topic-command-handled: here the two the
// language model is not needed for, a refusal and a command that fails for good (set aside by the command
// policy); applied and unchanged are in topic-management.test.ts.

describe('the outcome of a topic command the analysis refuses or cannot apply', () => {
  let pipeline: AnalysisPipeline
  let db: TestDatabase
  let chatbotId: string
  let orgId: string

  beforeAll(async () => {
    pipeline = await startAnalysisPipeline({ analysis: false })
    db = pipeline.db
    await pipeline.startAnalysis(new ScriptedAnalyzer({ name: 'scripted', version: 'v1' }), {
      commands: { maxAttempts: 3, retry: { baseMs: 20, maxMs: 50, jitter: 'equal' }, pollIntervalMs: 20 },
    })
    const { cookie, organization } = await signUp(pipeline.app)
    orgId = organization.id
    chatbotId = (await createChatbot(pipeline.app, cookie, { name: 'Support' })).chatbot.id
  })
  afterAll(() => pipeline?.close())

  /** A command as a gateway deciding on a stale view might have committed it. */
  const commit = (topicId: string) =>
    commitTopicCommand(db.pool, { orgId, chatbotId }, newEvent('chatbot.topic-hide-requested', { topicId }))

  const outcomeOf = async (commandEventId: string) => {
    let found: Record<string, unknown> | undefined
    await waitFor(
      async () => {
        found = (await journalEvents(db.pool, 'analysis', chatbotId)).find(
          (e) => e.type === 'analysis.topic-command-handled' && e.payload.commandEventId === commandEventId,
        )?.payload
        return found !== undefined
      },
      { timeoutMs: 30_000, what: 'the command to be handled' },
    )
    return found
  }

  /** How far the projector says the chatbot's topic commands are handled. */
  const cursor = async () =>
    (
      await db.pool.query('SELECT last_command_version FROM rm_topic_commands WHERE chatbot_id = $1', [
        chatbotId,
      ])
    ).rows[0]?.last_command_version

  it('says a command on a topic the chatbot does not have was refused, and why', async () => {
    const command = await commit(randomUUID())
    expect(await outcomeOf(command.id)).toEqual({
      commandEventId: command.id,
      commandStreamVersion: command.streamVersion,
      commandType: 'chatbot.topic-hide-requested',
      outcome: 'refused',
      reason: 'not_found',
      moved: null,
    })
    await waitFor(async () => (await cursor()) === command.streamVersion, {
      timeoutMs: 30_000,
      what: 'the cursor to reach the command',
    })
  })

  it('says a command that failed for good failed, naming no internals, and counts it as handled', async () => {
    // The database refuses to record the command's handling, as a full disk would: every attempt fails
    // until the command policy sets it aside; the record that it failed is let through.
    await db.pool.query(`CREATE FUNCTION refuse_handled() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'analysis.topic-command-handled' AND NEW.payload->>'outcome' <> 'failed' THEN
          RAISE EXCEPTION 'could not extend file "base/16384/2619": No space left on device';
        END IF;
        RETURN NEW;
      END $$`)
    await db.pool.query(
      'CREATE TRIGGER refuse_handled BEFORE INSERT ON event_journal FOR EACH ROW EXECUTE FUNCTION refuse_handled()',
    )
    let command: Awaited<ReturnType<typeof commit>>
    try {
      command = await commit(randomUUID())
      expect(await outcomeOf(command.id)).toEqual({
        commandEventId: command.id,
        commandStreamVersion: command.streamVersion,
        commandType: 'chatbot.topic-hide-requested',
        outcome: 'failed',
        reason: 'The analysis service could not apply the command (3 attempts).',
        moved: null,
      })
    } finally {
      await db.pool.query('DROP TRIGGER refuse_handled ON event_journal')
      await db.pool.query('DROP FUNCTION refuse_handled()')
    }
    const { rows } = await db.pool.query(
      'SELECT status, attempts FROM analysis_commands WHERE source_event_id = $1',
      [command.id],
    )
    expect(rows).toEqual([{ status: 'dead', attempts: 3 }])
    await waitFor(async () => (await cursor()) === command.streamVersion, {
      timeoutMs: 30_000,
      what: 'the cursor to pass the failed command',
    })
  })
})
