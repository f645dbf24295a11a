import { createReadStream, existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '@cas/config'
import { Metrics } from '@cas/metrics'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../../../../test/support/model.ts'
import { describeWithTestModel } from '../../test/test-model.ts'
import { ANALYSIS_METRICS } from '../metrics.ts'
import { EMBEDDING_MODEL_ID } from './embedding-model.ts'
import { analyzerReadiness, analyzerStatus, createAnalyzer } from './index.ts'

describeWithTestModel('loading the language model', () => {
  let dataDir: string
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'cas-model-'))
  })
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true })
  })

  const config = (env: Record<string, string>) =>
    loadConfig({ DATA_DIR: dataDir, ANALYSIS_THREADS: '0', ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB, ...env })

  it('loads it from ANALYSIS_MODEL_DIR, a folder in the hub layout, and versions the analyzer by it', async () => {
    const analyzer = await createAnalyzer(config({ ANALYSIS_MODEL_DIR: TEST_MODEL_DIR }))
    await analyzer.ready
    expect(analyzerStatus(analyzer)).toMatchObject({ state: 'ready', name: 'local-embedding' })
    expect(analyzer.info.version).toMatch(
      /^Xenova\/all-MiniLM-L6-v2@q8#03cad88273d80b59\+transformers@[\d.]+\+onnxruntime-node@[\d.]+\+alone\+sentiment:/,
    )
    const [user, assistant] = await analyzer.analyzeMessages(
      [
        { id: 'u', role: 'user', content: 'The app crashes when I upload a photo' },
        { id: 'a', role: 'assistant', content: 'Let me look into that photo upload for you.' },
      ],
      {},
    )
    expect(user!.embedding).toHaveLength(384)
    expect(user!.terms).toEqual(expect.arrayContaining(['app', 'crash', 'upload', 'photo']))
    expect(user!.sentiment.label).toBe('negative')
    // The assistant's messages get a sentiment, never an embedding: they make no topics.
    expect(assistant!.embedding).toBeUndefined()
  })

  it('closed while the model loads in its threads (a shutdown soon after the start), ends them at once: the model is never ready, nor the lexical fallback chosen', async () => {
    const warnings: string[] = []
    const analyzer = await createAnalyzer(
      config({ ANALYSIS_MODEL_DIR: TEST_MODEL_DIR, ANALYSIS_THREADS: '1' }),
      (msg) => warnings.push(msg),
    )
    expect(analyzerStatus(analyzer).state).toBe('loading')
    await analyzer.close!()
    // Before, close() waited for the load (and a forced exit meanwhile stopped the thread inside a model call).
    expect(analyzerStatus(analyzer).state).toBe('loading')
    await analyzer.ready
    expect(analyzerStatus(analyzer).state).toBe('loading')
    expect(warnings).toEqual([])
  })

  it('falls back to the lexical analyzer, with one warning saying how to get the model, when it cannot be had', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'cas-no-model-'))
    const warnings: string[] = []
    try {
      const analyzer = await createAnalyzer(config({ ANALYSIS_MODEL_DIR: empty }), (msg) =>
        warnings.push(msg),
      )
      await analyzer.ready
      const status = analyzerStatus(analyzer)
      expect(status).toMatchObject({ state: 'fallback', name: 'local-lexicon' })
      expect(status.reason).toContain(`ANALYSIS_MODEL_DIR ${empty} has no ${EMBEDDING_MODEL_ID}`)
      expect(status.reason).toContain(`the hub ${UNREACHABLE_HUB}: cannot reach it`)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/lexical analyzer instead.*set ANALYSIS_MODEL_DIR to a folder holding/)
      expect(analyzer.semantic).toBeUndefined()
      const [result] = await analyzer.analyzeMessages(
        [{ id: 'm', role: 'user', content: 'this is useless' }],
        {},
      )
      expect(result!.sentiment.label).toBe('negative')
      // Operators see it in /readyz and the metrics.
      expect(analyzerReadiness(analyzer).detail()).toMatchObject({ state: 'fallback' })
      const metrics = new Metrics()
      metrics.use(ANALYSIS_METRICS).observe({
        stats: { analyzedMessages: 0, retries: 0, deadLetters: 0, fencedOut: 0 },
        jobs: async () => ({ waiting: 0, dead: 0 }),
        analyzer: () => analyzerStatus(analyzer),
      })
      expect((await metrics.render()).body).toMatch(
        /cas_analysis_analyzer_info\{analyzer="local-lexicon",version="[^"]+",state="fallback"\} 1/,
      )
    } finally {
      await rm(empty, { recursive: true, force: true })
    }
  })

  describe('from the hub', () => {
    let hub: Server
    let hubUrl: string
    const requested: string[] = []
    beforeAll(async () => {
      // The hub's layout: /<model id>/resolve/<revision>/<file>, served from the test model's folder.
      hub = createServer((req, res) => {
        requested.push(req.url ?? '')
        const match = req.url?.match(/^\/(.+?)\/resolve\/main\/(.+)$/)
        const file =
          match && path.join(TEST_MODEL_DIR, decodeURIComponent(match[1]!), decodeURIComponent(match[2]!))
        if (!file || !existsSync(file)) {
          res.writeHead(404).end()
          return
        }
        res.writeHead(200)
        if (req.method === 'HEAD') res.end()
        else createReadStream(file).pipe(res)
      })
      await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve))
      hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}/`
    })
    afterAll(async () => {
      await new Promise((resolve) => hub.close(resolve))
    })

    it('downloads it on first use into DATA_DIR/models, then loads it from there without the hub', async () => {
      const first = await createAnalyzer(config({ ANALYSIS_MODEL_HUB_URL: hubUrl }))
      await first.ready
      expect(analyzerStatus(first).state).toBe('ready')
      expect(requested.some((url) => url.endsWith('/onnx/model_quantized.onnx'))).toBe(true)
      expect(existsSync(path.join(dataDir, 'models', EMBEDDING_MODEL_ID, 'onnx/model_quantized.onnx'))).toBe(
        true,
      )

      const offline = await createAnalyzer(config({ ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB }))
      await offline.ready
      expect(analyzerStatus(offline)).toMatchObject({ state: 'ready', version: first.info.version })
      const [result] = await offline.analyzeMessages(
        [{ id: 'm', role: 'user', content: 'where is my order' }],
        {},
      )
      expect(result!.embedding).toHaveLength(384)
    })
  })
})
