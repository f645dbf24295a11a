import { execFile } from 'node:child_process'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_CONVERSATION } from '../../gateway/src/chatbots/test-conversation.ts'
import {
  curlExample,
  exampleCapture,
  javascriptExample,
  KEY_PLACEHOLDER,
  shellQuote,
} from '../src/lib/capture-examples.ts'

const run = promisify(execFile)
const KEY = 'svc_live_0123456789abcdef0123456789abcdef'

interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: unknown
}

// The onboarding examples are meant to be pasted as they are: run them, against a stand-in server.
describe('the capture examples the onboarding shows', () => {
  let server: Server
  let origin: string
  const received: Received[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => {
        body += chunk
      })
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, headers: req.headers, body: JSON.parse(body) })
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ ok: true, messagesStored: 2 }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const expectCapture = (r: Received | undefined, key: string) => {
    expect(r).toMatchObject({ method: 'POST', url: '/api/v1/capture', body: exampleCapture() })
    expect(r!.headers.authorization).toBe(`Bearer ${key}`)
    expect(r!.headers['content-type']).toBe('application/json')
  }

  it('the curl command sends the example conversation with the key', async () => {
    received.length = 0
    const { stdout } = await run('sh', ['-c', curlExample(origin, KEY)])
    expect(JSON.parse(stdout)).toEqual({ ok: true, messagesStored: 2 })
    expectCapture(received[0], KEY)
  })

  it('the JavaScript sends the same, and both use a placeholder when the key is not known', async () => {
    received.length = 0
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      javascriptExample(origin, KEY),
    ])
    expect(stdout).toContain('200')
    expectCapture(received[0], KEY)
    expect(curlExample(origin, undefined)).toContain(`Bearer ${KEY_PLACEHOLDER}`)
    expect(javascriptExample(origin, undefined)).toContain(`Bearer ${KEY_PLACEHOLDER}`)
    expect(exampleCapture().messages).toHaveLength(2)
  })

  it('are what "Send a test conversation" sends (the server sends it, with the chatbot\'s key)', () => {
    expect(exampleCapture()).toEqual(TEST_CONVERSATION)
  })

  it('quotes text for the shell whatever it holds', async () => {
    const text = `it's "quoted" $HOME \`x\` \\ done`
    const { stdout } = await run('sh', ['-c', `printf %s ${shellQuote(text)}`])
    expect(stdout).toBe(text)
  })
})
