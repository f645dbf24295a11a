/**
 * The graph edit on the real model file (the vectors it gives are compared bit for bit with the published
 * graph's in embedding-model.model.test.ts).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { AutoModel, env, Tensor } from '@huggingface/transformers'
import { expect, it } from 'vitest'
import { TEST_MODEL_DIR } from '../../../../test/support/model.ts'
import { describeWithTestModel } from '../../test/test-model.ts'
import { leanGraphForLoneTexts, TOKEN_SUMS } from './model-graph.ts'

const FILE = path.join(TEST_MODEL_DIR, 'Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx')

describeWithTestModel("the model's graph trimmed for lone texts", () => {
  it('drops the nodes that computed the shapes, and edits a graph only once', () => {
    const file = readFileSync(FILE)
    const edited = leanGraphForLoneTexts(new Uint8Array(file.buffer, file.byteOffset, file.byteLength))
    expect(edited).toMatchObject({ before: 804, nodes: 393 })
    // Its Reshapes now read constants and its mask is gone: the edit does not find its graph again.
    expect(leanGraphForLoneTexts(edited!.bytes)).toBeUndefined()
  })
})

it('leaves a graph it was not made for as published', () => {
  // A ModelProto whose graph (field 7) holds one node (field 1): a Reshape named otherwise.
  const utf8 = (s: string) => [...new TextEncoder().encode(s)]
  const field = (n: number, body: number[]) => [n * 8 + 2, body.length, ...body]
  const node = [
    ...field(1, utf8('x')),
    ...field(1, utf8('shape')),
    ...field(2, utf8('y')),
    ...field(3, utf8('/m/Reshape_9')),
    ...field(4, utf8('Reshape')),
  ]
  const model = Uint8Array.from(field(7, field(1, node)))
  expect(leanGraphForLoneTexts(model)).toBeUndefined()
  expect(leanGraphForLoneTexts(new Uint8Array())).toBeUndefined()
})

interface OrtTensorLike {
  readonly dims: readonly number[]
  readonly data: unknown
}
interface Session {
  readonly outputNames: readonly string[]
  run(feeds: Record<string, unknown>, fetches: readonly string[]): Promise<Record<string, OrtTensorLike>>
  release?(): Promise<void>
}

describeWithTestModel("the trimmed graph's output: the tokens' sums, 384 numbers a text (perf8)", () => {
  it('is 384 float64 sums whatever the length: the published states added token by token, bit for bit', async () => {
    env.allowLocalModels = true
    env.localModelPath = `${TEST_MODEL_DIR}/`
    env.allowRemoteModels = false
    const published = await AutoModel.from_pretrained('Xenova/all-MiniLM-L6-v2', {
      dtype: 'q8',
      session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
    })
    const before = (published.sessions as Record<string, Session>).model!
    const file = readFileSync(FILE)
    const edited = leanGraphForLoneTexts(new Uint8Array(file.buffer, file.byteOffset, file.byteLength))!
    // onnxruntime's session class, as embedding-model.ts reaches it.
    const sessions = before.constructor as unknown as {
      create(model: Uint8Array, options: Record<string, unknown>): Promise<Session>
    }
    const after = await sessions.create(edited.bytes, { intraOpNumThreads: 1, interOpNumThreads: 1 })
    expect(after.outputNames).toEqual([TOKEN_SUMS])
    // A lone text's token ids ([CLS] … [SEP]) of 5 and of 60 tokens: the states grow with it, the sums do not.
    for (const tokens of [5, 60]) {
      const ids = BigInt64Array.from({ length: tokens }, (_, j) =>
        j === 0 ? 101n : j === tokens - 1 ? 102n : BigInt(2000 + ((j * 37) % 5000)),
      )
      const dims = [1, tokens]
      const feeds = {
        input_ids: new Tensor('int64', ids, dims).ort_tensor,
        attention_mask: new Tensor('int64', new BigInt64Array(tokens).fill(1n), dims).ort_tensor,
        token_type_ids: new Tensor('int64', new BigInt64Array(tokens), dims).ort_tensor,
      }
      const states = (await before.run(feeds, ['last_hidden_state'])).last_hidden_state!
      const sums = (await after.run(feeds, [TOKEN_SUMS]))[TOKEN_SUMS]!
      expect(states.dims).toEqual([1, tokens, 384])
      expect(sums.dims).toEqual([1, 384])
      expect(sums.data).toBeInstanceOf(Float64Array)
      const hidden = states.data as Float32Array
      const expected = new Float64Array(384)
      for (let j = 0; j < tokens; j++) {
        for (let k = 0; k < 384; k++) expected[k] = expected[k]! + hidden[j * 384 + k]!
      }
      expect((sums.data as Float64Array).every((x, k) => Object.is(x, expected[k]))).toBe(true)
    }
    await after.release?.()
    await published.dispose()
  }, 60_000)
})
