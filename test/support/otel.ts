import { signUp } from './auth.ts'
import { modelConfigEnv } from './model.ts'
import { startLiveAnalysis, startLiveProjector, startPipeline, type TestPipeline } from './pipeline.ts'
import { waitFor } from './wait.ts'

/** A conversation as GET /api/v1/conversations/:id answers it (the parts the OTel tests read). */
export interface ReadConversation {
  id: string
  conversationId: string
  user: Record<string, unknown>
  topics: string[]
  sentiment: { label: string } | null
  messages: { role: string; content: string; sentiment: { label: string } | null }[]
}

export interface OtelStack {
  readonly pipeline: TestPipeline
  /** Where the gateway listens (OTLP exporters need a real port). */
  readonly baseUrl: string
  /** A signed-in user's session cookie. */
  readonly cookie: string
  /** Waits for a conversation (by the caller's id) to be readable, and analysed when asked. */
  read(chatbotId: string, externalId: string, analysed: boolean): Promise<ReadConversation>
}

/**
 * For the OpenTelemetry exporters' tests: the gateway and query routes on a fresh database, listening on
 * a port, with a projector and the analysis service (the test model) on the journal. What it starts is
 * pushed onto `cleanups`.
 */
export async function startOtelStack(cleanups: (() => Promise<unknown>)[]): Promise<OtelStack> {
  const pipeline = await startPipeline('journal', cleanups)
  await startLiveProjector(pipeline, cleanups)
  await startLiveAnalysis(pipeline, cleanups, modelConfigEnv())
  const baseUrl = await pipeline.app.listen({ port: 0, host: '127.0.0.1' })
  const { cookie } = await signUp(pipeline.app)
  const get = (url: string) =>
    pipeline.app.inject({ method: 'GET', url, headers: { cookie } }).then((r) => r.json())
  return {
    pipeline,
    baseUrl,
    cookie,
    read: (chatbotId, externalId, analysed) =>
      waitFor(
        async () => {
          const list = await get(`/api/v1/conversations?chatbotId=${chatbotId}`)
          const found = list.conversations?.find((c: ReadConversation) => c.conversationId === externalId)
          if (!found) return undefined
          const { conversation } = (await get(`/api/v1/conversations/${found.id}`)) as {
            conversation: ReadConversation
          }
          const users = conversation.messages.filter((m) => m.role === 'user')
          const done = !analysed || (conversation.sentiment && users.every((m) => m.sentiment))
          return done && conversation
        },
        { what: `conversation ${externalId}${analysed ? ', analysed' : ''}`, timeoutMs: 60_000 },
      ),
  }
}

/** `role: content` of each message, in order. */
export const turns = (c: ReadConversation) => c.messages.map((m) => `${m.role}: ${m.content}`)
