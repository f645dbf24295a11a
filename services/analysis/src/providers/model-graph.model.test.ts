/**
 * The graph edit on the real model file (the vectors it gives are compared bit for bit with the published
 * graph's in embedding-model.model.test.ts).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { TEST_MODEL_DIR } from '../../../../test/support/model.ts'
import { describeWithTestModel } from '../../test/test-model.ts'
import { leanGraphForLoneTexts } from './model-graph.ts'

const FILE = path.join(TEST_MODEL_DIR, 'Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx')

describeWithTestModel("the model's graph trimmed for lone texts", () => {
  it('drops the nodes that computed the shapes, and edits a graph only once', () => {
    const file = readFileSync(FILE)
    const edited = leanGraphForLoneTexts(new Uint8Array(file.buffer, file.byteOffset, file.byteLength))
    expect(edited).toMatchObject({ before: 804, nodes: 391 })
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
