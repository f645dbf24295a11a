/**
 * A text's vector is a function of the text alone: the q8 model quantizes its activations with one scale
 * per tensor, so texts run in one batch shared a scale (padding included) and a text's vector changed with
 * its companions. Each text now runs alone; these tests compare float32 bits, not closeness.
 */
import { Worker } from 'node:worker_threads'
import { AutoModel, AutoTokenizer, mean_pooling } from '@huggingface/transformers'
import { beforeAll, expect, it } from 'vitest'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../../../../test/support/model.ts'
import { describeWithTestModel } from '../../test/test-model.ts'
import { type EmbeddingModel, loadEmbeddingModel } from './embedding-model.ts'

const SOURCE = { modelDir: TEST_MODEL_DIR, cacheDir: TEST_MODEL_DIR, hubUrl: UNREACHABLE_HUB }

const TEXT = 'where is my parcel?'
const SHORT = ['hi', 'ok', 'thanks!']
const LONG = [
  'I ordered a pair of running shoes three weeks ago, paid for express delivery, and the tracking page still says the label was created but nothing has moved since; can you tell me where it is?',
  `${'my card was declined at the supermarket although my balance is fine, '.repeat(12)}why?`,
]
/** A few dozen texts of every length, two of them given twice. */
const MIXED = [
  TEXT,
  ...SHORT,
  ...LONG,
  'how do I reset my password',
  'I want to talk to a person',
  'can I get a refund for a cancelled flight',
  'what is the interest rate on my savings account',
  'the app crashes every time I open it',
  'please cancel my subscription',
  'is there a discount for students',
  'my package arrived damaged',
  'how long does shipping to Canada take',
  'change the address on my account',
  'I was charged twice this month',
  'thanks, that fixed it',
  "I'm not sure I understand",
  'can you add my daughter to my policy',
  'what does my insurance cover for water damage',
  'I need a quote for life insurance',
  'why is my bill higher than last month',
  'set a reminder for 6 pm',
  'what is the weather like tomorrow in Paris',
  'translate good night into Spanish',
  'book a table for four at an Italian place',
  'how many vacation days do I have left',
  'lost my phone, block the sim please',
  'Ünïcödé text — with dashes, émojis 🎉 and 中文字符',
  '',
  '   ',
  TEXT,
  'hi',
]

const bits = (v: Float32Array) => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length))

describeWithTestModel('a text embedded by the model', () => {
  let model: EmbeddingModel
  beforeAll(async () => {
    model = await loadEmbeddingModel(SOURCE)
  }, 120_000)

  it('says in its version that each text runs alone', () => {
    expect(model.version).toMatch(/\+alone$/)
  })

  it('runs the published graph trimmed for lone texts (model-graph.ts): fewer nodes', () => {
    expect(model.graphNodes).toBe(393)
  })

  it('has the same float32 bits alone, among long and short companions, and in another order', async () => {
    const [alone] = await model.embed([TEXT])
    const amongLong = (await model.embed([LONG[0]!, TEXT, LONG[1]!]))[1]!
    const amongShort = (await model.embed([...SHORT, TEXT]))[3]!
    const mixed = await model.embed([LONG[1]!, ...SHORT, TEXT, LONG[0]!])
    const reversed = await model.embed([LONG[0]!, TEXT, ...SHORT.toReversed(), LONG[1]!])
    expect(alone).toHaveLength(384)
    for (const other of [amongLong, amongShort, mixed[4]!, reversed[1]!]) {
      expect(bits(other)).toEqual(bits(alone!))
    }
    // The companions too are each their own, whatever their place.
    expect(bits(mixed[0]!)).toEqual(bits(reversed[5]!))
    expect(bits(mixed[5]!)).toEqual(bits(reversed[0]!))
    expect(bits(mixed[1]!)).toEqual(bits(reversed[4]!))
  })

  it('gives a few dozen mixed texts the same vectors in one call as one by one', async () => {
    const together = await model.embed(MIXED)
    expect(together).toHaveLength(MIXED.length)
    for (const [i, text] of MIXED.entries()) {
      const [single] = await model.embed([text])
      expect(bits(together[i]!), text).toEqual(bits(single!))
    }
    // Distinct texts have distinct vectors: the comparison above is not of one constant vector.
    expect(bits(together[0]!)).not.toEqual(bits(together[1]!))
  })

  it("gives the vectors of Transformers.js's plain path (the published graph), a text a call, texts of every length", async () => {
    // loadEmbeddingModel has pointed Transformers.js at the test model's folder.
    const tokenizer = await AutoTokenizer.from_pretrained('Xenova/all-MiniLM-L6-v2')
    const plain = await AutoModel.from_pretrained('Xenova/all-MiniLM-L6-v2', {
      dtype: 'q8',
      session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
    })
    // Every length of 3 to 130 tokens (the graph runs at each text's own length), and beyond 128.
    const lengths = Array.from({ length: 128 }, (_, k) => 'claim '.repeat(k + 1).trim())
    const texts = [...MIXED, ...lengths, 'word '.repeat(300), 'x'.repeat(3_000)]
    const service = await model.embed(texts)
    for (const [i, text] of texts.entries()) {
      const inputs = tokenizer(text.slice(0, 1_000), { truncation: true, max_length: 128 })
      const { last_hidden_state } = await plain(inputs)
      const expected = mean_pooling(last_hidden_state, inputs.attention_mask).normalize(2, -1)
        .data as Float32Array
      expect(bits(service[i]!), text.slice(0, 40)).toEqual(bits(expected))
    }
    await plain.dispose()
  }, 120_000)

  it('gives the same vectors in another thread, another model instance', async () => {
    const here = await model.embed(MIXED)
    const there = await embedInWorker(MIXED)
    expect(there).toHaveLength(MIXED.length)
    for (const [i, text] of MIXED.entries()) expect(bits(there[i]!), text).toEqual(bits(here[i]!))
  }, 120_000)
})

/** Loads the model in a worker thread of its own, as an analyzer thread does, and embeds the texts there. */
function embedInWorker(texts: readonly string[]): Promise<Float32Array[]> {
  const module = new URL('./embedding-model.ts', import.meta.url).href
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
    import('tsx/esm/api')
      .then(({ tsImport }) => tsImport(workerData.module, workerData.module))
      .then(({ loadEmbeddingModel }) => loadEmbeddingModel(workerData.source))
      .then((model) => model.embed(workerData.texts))
      .then((vectors) => parentPort.postMessage(vectors))`,
    { eval: true, workerData: { module, source: SOURCE, texts } },
  )
  return new Promise<Float32Array[]>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) without vectors`)))
  }).finally(() => worker.terminate())
}
