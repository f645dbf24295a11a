/**
 * One capture followed through every service by its request id: the caller's X-Request-Id comes back in
 * the response, becomes the correlation (and causation) id of the events the gateway commits, travels
 * through the event log (the journal, or Kafka), and is logged by the projector and the analysis service
 * as they apply those events; the analysis events carry it on, caused by the capture's event.
 */
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { createAnalysisService } from '@cas/service-analysis'
import { createProjector } from '@cas/service-projector'
import { type Logger, pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { ScriptedAnalyzer } from '../services/analysis/test/scripted-analyzer.ts'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { uniqueGroupId } from './support/kafka.ts'
import { testKeyring } from './support/keyring.ts'
import { EVENT_LOG_MODES, startPipeline } from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'

type LogLine = Record<string, unknown>

/** A JSON logger whose lines land in `lines`, as a service's would on stdout. */
function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

interface Row {
  event_id: string
  type: string
  metadata: Record<string, string>
}

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`request ids through the services, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    it('follows one capture from the gateway through the projector and the analysis service', async () => {
      const { db, app, eventLog } = await startPipeline(mode.name, cleanups)
      const projectorLog = capturingLogger()
      const analysisLog = capturingLogger()
      const projector = createProjector({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        logger: projectorLog.logger,
        groupId: uniqueGroupId('projector'),
      })
      await projector.consumer.start()
      cleanups.push(() => projector.consumer.stop())
      const analysis = createAnalysisService({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        analyzer: new ScriptedAnalyzer(),
        logger: analysisLog.logger,
        groupId: uniqueGroupId('analysis'),
      })
      await analysis.start()
      cleanups.push(() => analysis.stop())

      const { apiKey } = await createChatbot(app, (await signUp(app)).cookie)
      const requestId = `sdk-${randomUUID()}`
      const captured = await postCapture(
        app,
        apiKey,
        { conversationId: 'traced', messages: [{ id: 'm-1', role: 'user', content: 'score:0.5 hello' }] },
        { 'x-request-id': requestId },
      )
      expect(captured.statusCode, captured.body).toBe(200)
      expect(captured.headers['x-request-id']).toBe(requestId)
      const streamId = captured.json().conversationId

      // The gateway's events: the request is their correlation and their cause.
      const { rows: captureEvents } = await db.pool.query<Row>(
        `SELECT event_id, type, metadata FROM event_journal WHERE stream_type = 'conversation' AND stream_id = $1
          ORDER BY stream_version`,
        [streamId],
      )
      expect(captureEvents.map((e) => e.type)).toEqual([
        'conversation.started',
        'conversation.messages-captured',
      ])
      for (const e of captureEvents) {
        expect(e.metadata).toEqual({ correlationId: requestId, causationId: requestId, requestId })
      }
      const messagesCaptured = captureEvents[1]!

      // The analysis events: same correlation, caused by the capture's event.
      const analysisEvents = await waitFor(
        async () => {
          const { rows } = await db.pool.query<Row>(
            `SELECT event_id, type, metadata FROM event_journal WHERE stream_type = 'analysis' AND stream_id = $1
              ORDER BY stream_version`,
            [streamId],
          )
          return rows.length === 2 && rows
        },
        { what: 'the analysis events' },
      )
      for (const e of analysisEvents) {
        expect(e.metadata).toEqual({ correlationId: requestId, causationId: messagesCaptured.event_id })
      }

      // Every service logged its part under the same correlation id.
      const traced = (lines: LogLine[], msg: string) =>
        lines.filter((l) => l.msg === msg && l.correlationId === requestId)
      await waitFor(() => traced(projectorLog.lines, 'projected event').length === 4, {
        what: 'the projector logging the four events of the capture',
      })
      expect(traced(projectorLog.lines, 'projected event')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            type: 'conversation.messages-captured',
            eventId: messagesCaptured.event_id,
            streamId,
            causationId: requestId,
            requestId,
          }),
          expect.objectContaining({
            type: 'analysis.messages-analyzed',
            eventId: analysisEvents[0]!.event_id,
            causationId: messagesCaptured.event_id,
          }),
        ]),
      )
      expect(traced(analysisLog.lines, 'analysis consumer applied event')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            type: 'conversation.messages-captured',
            eventId: messagesCaptured.event_id,
          }),
        ]),
      )
      expect(traced(analysisLog.lines, 'analyzed messages')).toEqual([
        expect.objectContaining({
          conversationId: streamId,
          causationId: messagesCaptured.event_id,
          messages: 1,
        }),
      ])
    })
  })
}

describe('request ids of chatbot commands', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  it('traces chatbot commands the same way, naming who did it, and makes up an id for a request without one', async () => {
    const { db, app } = await startPipeline('journal', cleanups)
    const { cookie, user } = await signUp(app)
    const { chatbot } = await createChatbot(app, cookie)
    const renamed = await app.inject({
      method: 'PATCH',
      url: `/api/v1/chatbots/${chatbot.id}`,
      headers: { cookie, 'x-request-id': 'dashboard-rename-1' },
      payload: { name: 'Renamed' },
    })
    expect(renamed.statusCode).toBe(200)
    const { rows } = await db.pool.query<Row>(
      `SELECT event_id, type, metadata FROM event_journal WHERE stream_type = 'chatbot' AND stream_id = $1
        ORDER BY stream_version`,
      [chatbot.id],
    )
    expect(rows.map((r) => r.type)).toEqual(['chatbot.created', 'chatbot.renamed'])
    const created = rows[0]!.metadata
    expect(created.correlationId).toMatch(/^[0-9a-f-]{36}$/)
    expect(created).toEqual({
      correlationId: created.correlationId,
      causationId: created.correlationId,
      requestId: created.correlationId,
      actorId: user.id,
    })
    expect(rows[1]!.metadata).toEqual({
      correlationId: 'dashboard-rename-1',
      causationId: 'dashboard-rename-1',
      requestId: 'dashboard-rename-1',
      actorId: user.id,
    })
  })
})
