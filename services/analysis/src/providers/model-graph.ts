/**
 * all-MiniLM-L6-v2's ONNX graph (Xenova's q8 export) trimmed for texts run alone: the same arithmetic in
 * fewer nodes, for 9–12 % less CPU per text (onnxruntime's cost per node weighs most in a short text's
 * run; bench/FINDINGS.md, "whole-pipeline CPU per message"). Three edits, all leaving every vector bit
 * for bit the same (embedding-model's tests compare against Transformers.js on the published graph):
 *
 * - **Constant Reshape shapes.** 31 of its 33 Reshapes take a target shape computed on every run from the
 *   input's shape (Shape → Gather → Unsqueeze → Concat chains); given as constants instead (0 keeps the
 *   input's dimension, −1 takes the rest). A reshape is a view of the same numbers.
 * - **No attention mask.** Each layer adds the mask's additive form to the attention scores before the
 *   softmax, and replaces any NaN of the softmax by 0. A text run alone has no padding: its mask is all
 *   ones, its additive form all zeros, and x + 0 is x (−0 becomes +0, which the softmax's exp cannot
 *   tell apart); the softmax of finite scores has no NaN. So the softmax reads the scores directly and
 *   the next MatMul the softmax. **The graph then ignores `attention_mask`: it is for lone texts only**
 *   (embedding-model.ts runs every text alone, with no padding).
 *
 * - **The tokens' sum as the output** (perf8). The graph's output is no longer `last_hidden_state` (tokens
 *   × 384 float32, copied out into a new buffer on every run: 28 KB for a DSTC11 request) but `token_sums`: the states cast to float64 and summed over the tokens (Cast, ReduceSum), 384 float64.
 *   Mean pooling summed each dimension in float64, token by token in order, and onnxruntime's ReduceSum
 *   over the middle axis does the same additions in the same order (a copy of the first row, then each
 *   next row added), so the sums are the same doubles; the division by the count and the norm stay in
 *   embedding-model.ts, as before.
 *
 * The nodes left with no consumer (some 400 of 804) are dropped. The edit is made on the protobuf bytes,
 * field by field, without a schema: the model's nodes (GraphProto field 1: NodeProto, whose inputs are
 * field 1, outputs 2, name 3, op type 4, attributes 5), its initializers (field 5: TensorProto) and its
 * outputs (field 12: ValueInfoProto, name 1, type 2). Only a graph holding every node below by name, wired
 * as expected, is edited; any other model runs as published.
 */

/** The edited graph's one output: each dimension's sum over the tokens, float64 ([1, 384]). */
export const TOKEN_SUMS = 'token_sums'
const HIDDEN_STATE = 'last_hidden_state'

/** The target shapes, by node name: per layer, the query, key and value split into heads, and back. */
const RESHAPES: ReadonlyMap<string, readonly number[]> = new Map([
  ['/m/Reshape_1', [1, 1, 1, -1]],
  ...[0, 1, 2, 3, 4, 5].flatMap((layer) => {
    const at = `/m/encoder/layer.${layer}/attention/self/`
    return [
      [`${at}Reshape`, [1, 0, -1, 32]],
      [`${at}Reshape_1`, [1, 0, -1, 32]],
      [`${at}Reshape_2`, [1, 0, -1, 32]],
      [`${at}Reshape_3`, [1, -1, 0, 32]],
      [`${at}Reshape_4`, [1, 0, -1]],
    ] as [string, number[]][]
  }),
])

interface Field {
  readonly field: number
  readonly wire: number
  /** The whole field, tag included. */
  readonly start: number
  readonly end: number
  /** A length-delimited field's bytes (wire type 2). */
  readonly body?: Uint8Array
}

function readVarint(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0
  let scale = 1
  for (;;) {
    if (at >= bytes.length) throw new Error('truncated varint')
    const byte = bytes[at++]!
    value += (byte & 0x7f) * scale
    if (byte < 0x80) return [value, at]
    scale *= 128
  }
}

function fieldsOf(bytes: Uint8Array): Field[] {
  const out: Field[] = []
  let at = 0
  while (at < bytes.length) {
    const start = at
    const [tag, afterTag] = readVarint(bytes, at)
    const field = Math.floor(tag / 8)
    const wire = tag % 8
    at = afterTag
    if (wire === 0) at = readVarint(bytes, at)[1]
    else if (wire === 1) at += 8
    else if (wire === 5) at += 4
    else if (wire === 2) {
      const [length, bodyStart] = readVarint(bytes, at)
      at = bodyStart + length
      if (at > bytes.length) throw new Error('truncated field')
      out.push({ field, wire, start, end: at, body: bytes.subarray(bodyStart, at) })
      continue
    } else throw new Error(`wire type ${wire} not expected`)
    out.push({ field, wire, start, end: at })
  }
  return out
}

function varint(value: number): number[] {
  const out: number[] = []
  while (value >= 128) {
    out.push((value % 128) | 0x80)
    value = Math.floor(value / 128)
  }
  out.push(value)
  return out
}

/** A length-delimited field: its tag, its length, its bytes. */
function lengthDelimited(field: number, body: Uint8Array): Uint8Array[] {
  return [Uint8Array.from([...varint(field * 8 + 2), ...varint(body.length)]), body]
}

const utf8 = new TextEncoder()
const text = new TextDecoder()
const stringsOf = (fields: readonly Field[], field: number) =>
  fields.filter((f) => f.field === field && f.body).map((f) => text.decode(f.body))

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** A TensorProto of int64 values: dims (1), data_type (2: INT64 is 7), name (8), raw_data (9). */
function int64Tensor(name: string, values: readonly number[]): Uint8Array {
  const raw = new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer)
  return concat([
    Uint8Array.from([...varint(1 * 8), ...varint(values.length), ...varint(2 * 8), 7]),
    ...lengthDelimited(8, utf8.encode(name)),
    ...lengthDelimited(9, raw),
  ])
}

/** An int64 attribute (AttributeProto: name 1, i 3, type 20: INT is 2). */
const intAttribute = (name: string, value: number) =>
  concat([...lengthDelimited(1, utf8.encode(name)), Uint8Array.from([3 * 8, ...varint(value), 160, 1, 2])])

/** A NodeProto of the default domain: inputs 1, outputs 2, name 3, op type 4, attributes 5. */
const nodeProto = (op: string, inputs: string[], output: string, attributes: Uint8Array[]) =>
  concat([
    ...inputs.flatMap((input) => lengthDelimited(1, utf8.encode(input))),
    ...lengthDelimited(2, utf8.encode(output)),
    ...lengthDelimited(3, utf8.encode(`/pooling/${op}`)),
    ...lengthDelimited(4, utf8.encode(op)),
    ...attributes.flatMap((attribute) => lengthDelimited(5, attribute)),
  ])

/** Cast (to DOUBLE, 11) and ReduceSum over the tokens (axes [1] as an input from opset 13, no kept axis). */
function tokenSumNodes(): Uint8Array[] {
  const states = '/pooling/states_float64'
  const axes = '/pooling/axes'
  return [
    ...lengthDelimited(1, nodeProto('Cast', [HIDDEN_STATE], states, [intAttribute('to', 11)])),
    ...lengthDelimited(1, nodeProto('ReduceSum', [states, axes], TOKEN_SUMS, [intAttribute('keepdims', 0)])),
    ...lengthDelimited(5, int64Tensor(axes, [1])),
  ]
}

/** ValueInfoProto of a float64 tensor: name 1, type 2 (TypeProto: tensor_type 1, its elem_type 1). */
const float64Output = (name: string) =>
  concat([...lengthDelimited(1, utf8.encode(name)), ...lengthDelimited(2, Uint8Array.from([10, 2, 8, 11]))])

/**
 * The model's bytes with its Reshapes' shapes made constant, its attention mask bypassed, its output the
 * tokens' sums (TOKEN_SUMS), and the nodes left unread dropped; or undefined when the graph is not the one
 * these edits were made for (then it runs as published). For texts run alone only (the mask is ignored).
 */
export function leanGraphForLoneTexts(
  model: Uint8Array,
): { bytes: Uint8Array; nodes: number; before: number } | undefined {
  const top = fieldsOf(model)
  const graphField = top.find((f) => f.field === 7 && f.body)
  if (!graphField) return undefined
  const graph = fieldsOf(graphField.body!)
  const nodes = graph
    .filter((f) => f.field === 1 && f.body)
    .map((f) => {
      const fields = fieldsOf(f.body!)
      return {
        field: f,
        fields,
        inputs: stringsOf(fields, 1),
        outputs: stringsOf(fields, 2),
        name: stringsOf(fields, 3)[0] ?? '',
        op: stringsOf(fields, 4)[0] ?? '',
      }
    })
  const constants = new Set([
    ...graph.filter((f) => f.field === 5 && f.body).flatMap((f) => stringsOf(fieldsOf(f.body!), 8)),
    ...nodes.filter((n) => n.op === 'Constant').flatMap((n) => n.outputs),
  ])
  const edited = nodes.filter(
    (n) =>
      n.op === 'Reshape' && RESHAPES.has(n.name) && n.inputs.length === 2 && !constants.has(n.inputs[1]!),
  )
  if (edited.length !== RESHAPES.size) return undefined
  const shapeOf = new Map(edited.map((n) => [n, `${n.name}/constant_shape`]))
  for (const [n, name] of shapeOf) n.inputs[1] = name

  // Each layer's softmax reads the scores, not scores + mask; the next MatMul the softmax, not its NaN guard.
  const named = new Map(nodes.map((n) => [n.name, n]))
  const rewired = new Set<(typeof nodes)[number]>()
  for (const layer of [0, 1, 2, 3, 4, 5]) {
    const at = `/m/encoder/layer.${layer}/attention/self/`
    const [scores, add, softmax, guard, next] = ['MatMul', 'Add', 'Softmax', 'Where_1', 'MatMul_1'].map(
      (name) => named.get(`${at}${name}`),
    )
    if (
      !scores ||
      add?.op !== 'Add' ||
      add.inputs[0] !== scores.outputs[0] ||
      softmax?.op !== 'Softmax' ||
      softmax.inputs[0] !== add.outputs[0] ||
      guard?.op !== 'Where' ||
      guard.inputs[2] !== softmax.outputs[0] ||
      next?.op !== 'MatMul' ||
      next.inputs[0] !== guard.outputs[0]
    ) {
      return undefined
    }
    softmax.inputs[0] = scores.outputs[0]!
    next.inputs[0] = softmax.outputs[0]!
    rewired.add(softmax).add(next)
  }

  // The one output, the last layer's states, is read by the pooling nodes in its stead.
  const outputs = graph.filter((f) => f.field === 12 && f.body)
  const outputNames = outputs.flatMap((f) => stringsOf(fieldsOf(f.body!), 1))
  if (outputNames.join() !== HIDDEN_STATE || opsetOf(top) < 13) return undefined

  // Drop every node none of whose outputs is read, until none is left.
  const graphOutputs = [HIDDEN_STATE]
  let kept = nodes
  for (;;) {
    const read = new Set([...graphOutputs, ...kept.flatMap((n) => n.inputs)])
    const next = kept.filter((n) => n.outputs.some((o) => o !== '' && read.has(o)))
    if (next.length === kept.length) break
    kept = next
  }
  const keep = new Set(kept.map((n) => n.field))
  const byField = new Map(nodes.map((n) => [n.field, n]))

  const parts: Uint8Array[] = []
  for (const f of graph) {
    if (f.field === 1 && f.body) {
      if (!keep.has(f)) continue
      const node = byField.get(f)!
      if (shapeOf.has(node) || rewired.has(node)) {
        const body = concat([
          ...node.inputs.flatMap((input) => lengthDelimited(1, utf8.encode(input))),
          ...node.fields.filter((g) => g.field !== 1).map((g) => f.body!.subarray(g.start, g.end)),
        ])
        parts.push(...lengthDelimited(1, body))
        continue
      }
    }
    if (f === outputs[0]) {
      parts.push(...lengthDelimited(12, float64Output(TOKEN_SUMS)))
      continue
    }
    parts.push(graphField.body!.subarray(f.start, f.end))
  }
  parts.push(...tokenSumNodes())
  for (const [n, name] of shapeOf) parts.push(...lengthDelimited(5, int64Tensor(name, RESHAPES.get(n.name)!)))
  const newGraph = concat(parts)
  const bytes = concat(
    top.flatMap((f) => (f === graphField ? lengthDelimited(7, newGraph) : [model.subarray(f.start, f.end)])),
  )
  return { bytes, nodes: kept.length + 2, before: nodes.length }
}

/** The default domain's opset (ModelProto field 8: OperatorSetIdProto, domain 1, version 2). */
function opsetOf(top: readonly Field[]): number {
  for (const f of top.filter((g) => g.field === 8 && g.body)) {
    const fields = fieldsOf(f.body!)
    if (stringsOf(fields, 1).join('') !== '') continue
    const version = fields.find((g) => g.field === 2 && g.wire === 0)
    return version ? readVarint(f.body!, version.start + 1)[0] : 0
  }
  return 0
}
