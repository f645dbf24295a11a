import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { expect } from 'vitest'
import type { ReclusterPolicy } from '../../services/analysis/src/topics/reclusterer.ts'
import type { Vector } from '../../services/analysis/src/topics/vectors.ts'
import { postCapture } from './chatbots.ts'

// What the end-to-end topic tests with the language model capture, and how they steer re-clustering.

/** Hand-written support requests (not from any benchmark): paraphrases of one request each. */
export const SUPPORT_REQUESTS = {
  password: [
    'How do I reset my password?',
    "I forgot my password and can't sign in",
    'I need to change my password',
    "The password reset link isn't arriving",
    'how can I recover my password',
  ],
  delivery: [
    'Where is my order?',
    "My package hasn't arrived yet",
    'When will my order be delivered?',
    'Has my order shipped yet?',
    'my delivery is late again',
  ],
}

/** One insurer's requests, hand-written (not from DSTC11): close together, as one domain's are. */
export const INSURER = {
  claim: [
    'I need to file a claim for my car accident',
    'How do I report a claim after a fender bender?',
    'I want to open a claim, someone hit my car',
    'Can I submit an insurance claim for hail damage?',
    'start a new claim for my damaged vehicle',
  ],
  driver: [
    'I want to add my daughter as a driver',
    'How do I add a new driver to my policy?',
    'please put my husband on my car insurance',
    'can I add my son to my auto policy, he just got his license',
    'add another driver to my plan',
  ],
  quote: [
    'Can I get a quote for car insurance?',
    'How much would it cost to insure my new truck?',
    'I would like a price for auto coverage',
    'give me a quote for insuring my Honda',
    'what would my premium be for a new policy?',
  ],
  bill: [
    'I want to pay my insurance bill',
    'How can I make a payment on my policy?',
    'pay my premium online please',
    "I need to pay this month's bill",
    'where do I pay my insurance invoice?',
  ],
}

/** Roadside-assistance requests for creating a topic from examples: its examples, requests asked before it
 * exists (too few to make a topic of their own: they wait in "other"), and paraphrases asked after. */
export const ROADSIDE = {
  examples: [
    'My car broke down on the highway and I need a tow truck',
    'Can you send roadside assistance, my battery is dead',
    'I have a flat tire and need someone to come help me',
    'my vehicle will not start, I need a tow',
  ],
  before: [
    'my car broke down on the highway, I need a tow truck',
    'please send roadside assistance, my battery is dead',
  ],
  after: [
    'my car broke down and I need a tow truck',
    'my battery is dead, can you send roadside assistance?',
    'I got a flat tire and need someone to come and help',
  ],
}

/** Every run due as soon as a request is waiting; a failed run retried at once. */
export const EAGER: ReclusterPolicy = {
  window: 5_000,
  growth: 0.1,
  minIntervalMs: 0,
  maxIntervalMs: 0,
  timeoutMs: 120_000,
  maxAttempts: 3,
  retryBaseMs: 1,
  pollIntervalMs: 10,
}

/**
 * Captures one conversation per text, its end user's one message 'q', under the id `<request>-<k>`
 * (k counting every conversation `requestOf` holds, from 1), and notes each one's request in `requestOf`.
 */
export async function captureRequests(
  app: FastifyInstance,
  apiKey: string,
  requests: Record<string, readonly string[]>,
  requestOf: Map<string, string>,
): Promise<void> {
  for (const [request, texts] of Object.entries(requests)) {
    for (const text of texts) {
      const conversationId = `${request}-${requestOf.size + 1}`
      requestOf.set(conversationId, request)
      const res = await postCapture(app, apiKey, {
        conversationId,
        messages: [{ id: 'q', role: 'user', content: text }],
      })
      expect(res.statusCode, res.body).toBe(200)
    }
  }
}

/**
 * A clustering that numbers the chatbot's window messages by their request (`numbers`, by the request
 * `requestOf` gives their conversation): a given, so that what a re-clustering run is told is fixed.
 */
export function clusterByRequest(
  pool: pg.Pool,
  chatbotId: string,
  requestOf: ReadonlyMap<string, string>,
  numbers: Record<string, number>,
) {
  const bytes = (v: Vector) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
  return async (vectors: readonly Vector[]) => {
    const { rows } = await pool.query<{ embedding: Buffer; external_id: string }>(
      `SELECT w.embedding, c.external_id FROM topic_window w JOIN rm_conversations c ON c.id = w.conversation_id
        WHERE w.chatbot_id = $1`,
      [chatbotId],
    )
    const requestOfVector = new Map(
      rows.map((r) => [r.embedding.toString('base64'), requestOf.get(r.external_id)!]),
    )
    return vectors.map((v) => numbers[requestOfVector.get(bytes(v))!]!)
  }
}
