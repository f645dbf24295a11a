/**
 * The HTTP + JSON ceiling: a bare Fastify server with the capture route's path that parses the same JSON
 * body and answers a capture-sized JSON response, doing nothing else (no key check, no validation, no
 * database). Run as its own process, like the service; prints `listening <port>`.
 */
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.post<{ Body: { messages: unknown[] } }>('/api/v1/capture', async (request) => ({
  ok: true,
  conversationId: randomUUID(),
  messagesStored: request.body.messages.length,
  analysisQueued: true,
  warnings: [],
}))
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
console.log(`listening ${typeof address === 'object' && address ? address.port : ''}`)
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0))
})
