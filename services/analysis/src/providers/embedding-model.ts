/**
 * The local language model: all-MiniLM-L6-v2 sentence embeddings (sentence-transformers, Apache-2.0; 384
 * dimensions, mean pooling, L2-normalized), quantized to int8, run on the CPU by Transformers.js
 * (`@huggingface/transformers`) on onnxruntime-node, in the thread that calls it, each text alone (see
 * EMBEDDING_MODE). Loaded in this order:
 * a folder in the Hugging Face hub's layout (ANALYSIS_MODEL_DIR), else the hub itself (downloaded once,
 * cached under DATA_DIR/models); when neither can be had, loading fails with the reasons, and the caller
 * falls back to the lexical analyzer.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { AutoModel, AutoTokenizer, env, type PreTrainedTokenizer, Tensor } from '@huggingface/transformers'
import { leanGraphForLoneTexts, TOKEN_SUMS } from './model-graph.ts'

export const EMBEDDING_MODEL_ID = 'Xenova/all-MiniLM-L6-v2'
export const EMBEDDING_MODEL_DTYPE = 'q8'
const MODEL_FILE = 'onnx/model_quantized.onnx'

/** Chat messages need no more: the model was trained on 128-token pieces, and longer text is cut. */
const MAX_TOKENS = 128
/** Characters read before tokenizing, a cheap bound far above 128 tokens. */
const MAX_CHARS = 1_000
/**
 * Marks the version of a model whose texts are embedded each alone. The q8 model quantizes its activations
 * dynamically (DynamicQuantizeLinear: one scale per tensor), so a batch shares one scale, padding
 * included, and a text's vector depended on what it was batched with. Run alone, a text's vector is a
 * function of the text, bit for bit: a replay and a re-analysis embed every text as before.
 */
export const EMBEDDING_MODE = 'alone'

export interface ModelSource {
  /** A folder holding `Xenova/all-MiniLM-L6-v2/…` as on the hub (ANALYSIS_MODEL_DIR). */
  readonly modelDir?: string
  /** Where a model downloaded from the hub is kept (DATA_DIR/models). */
  readonly cacheDir: string
  /** The hub (ANALYSIS_MODEL_HUB_URL); a mirror, or an address that refuses, to keep the service offline. */
  readonly hubUrl: string
}

export interface EmbeddingModel {
  /** e.g. `Xenova/all-MiniLM-L6-v2@q8#03cad882…+transformers@4.3.1+onnxruntime-node@1.30.0+alone`. */
  readonly version: string
  /** Where it was loaded from: 'folder' (ANALYSIS_MODEL_DIR) or 'hub' (downloaded or cached). */
  readonly loadedFrom: 'folder' | 'hub'
  readonly loadMs: number
  /**
   * The nodes of the graph it runs: fewer than the published file's when it was trimmed for lone texts
   * (model-graph.ts: the same outputs bit for bit, less work per text).
   */
  readonly graphNodes?: number
  /** Unit-length embeddings, one per text, in order; each a function of its text alone. */
  embed(texts: readonly string[]): Promise<Float32Array[]>
}

export class ModelUnavailableError extends Error {
  constructor(readonly reasons: string[]) {
    super(`the language model ${EMBEDDING_MODEL_ID} could not be loaded: ${reasons.join('; ')}`)
    this.name = 'ModelUnavailableError'
  }
}

const require = createRequire(import.meta.url)
const versionOf = (pkg: string) => (require(`${pkg}/package.json`) as { version: string }).version

export async function loadEmbeddingModel(source: ModelSource): Promise<EmbeddingModel> {
  const started = performance.now()
  const reasons: string[] = []
  const attempts: { from: 'folder' | 'hub'; configure: () => void; file: string }[] = []
  if (source.modelDir) {
    const dir = path.resolve(source.modelDir)
    attempts.push({
      from: 'folder',
      file: path.join(dir, EMBEDDING_MODEL_ID, MODEL_FILE),
      configure: () => {
        env.allowLocalModels = true
        env.localModelPath = `${dir}/`
        env.allowRemoteModels = false
      },
    })
  }
  attempts.push({
    from: 'hub',
    file: path.join(source.cacheDir, EMBEDDING_MODEL_ID, MODEL_FILE),
    configure: () => {
      env.allowLocalModels = false
      env.allowRemoteModels = true
      env.remoteHost = source.hubUrl.endsWith('/') ? source.hubUrl : `${source.hubUrl}/`
      env.useFSCache = true
      env.cacheDir = source.cacheDir
    },
  })
  for (const attempt of attempts) {
    if (attempt.from === 'folder' && !existsSync(attempt.file)) {
      reasons.push(
        `ANALYSIS_MODEL_DIR ${source.modelDir} has no ${path.join(EMBEDDING_MODEL_ID, MODEL_FILE)}`,
      )
      continue
    }
    attempt.configure()
    try {
      const tokenizer = await AutoTokenizer.from_pretrained(EMBEDDING_MODEL_ID)
      const model = await AutoModel.from_pretrained(EMBEDDING_MODEL_ID, {
        dtype: EMBEDDING_MODEL_DTYPE,
        // One core per analyzer thread: ANALYSIS_THREADS says how many the analysis may take.
        session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
      })
      // The model file read once: its graph trimmed (withFewerNodes), and the first 16 hex digits of its
      // SHA-256 in the version (a re-exported or newer model is another version).
      const bytes = existsSync(attempt.file) ? await readFile(attempt.file) : undefined
      const { session, nodes } = await withFewerNodes(modelSession(model.sessions), bytes)
      const digest = bytes && createHash('sha256').update(bytes).digest('hex').slice(0, 16)
      return {
        version:
          `${EMBEDDING_MODEL_ID}@${EMBEDDING_MODEL_DTYPE}${digest ? `#${digest}` : ''}` +
          `+transformers@${env.version}+onnxruntime-node@${versionOf('onnxruntime-node')}` +
          `+${EMBEDDING_MODE}`,
        loadedFrom: attempt.from,
        loadMs: Math.round(performance.now() - started),
        ...(nodes ? { graphNodes: nodes } : {}),
        embed: (texts) => embed(tokenizer, session, texts),
      }
    } catch (err) {
      const cause =
        attempt.from === 'hub' && !existsSync(attempt.file)
          ? await hubProblem(source.hubUrl)
          : (err as Error).message.split('\n')[0]
      const where =
        attempt.from === 'folder' ? `ANALYSIS_MODEL_DIR ${source.modelDir}` : `the hub ${source.hubUrl}`
      reasons.push(`${where}: ${cause}`)
    }
  }
  throw new ModelUnavailableError(reasons)
}

/**
 * Each text through the model alone (a batch of one, no padding): its vector depends on nothing else.
 * A text given twice in one call is embedded once.
 */
async function embed(
  tokenizer: PreTrainedTokenizer,
  session: OrtSession,
  texts: readonly string[],
): Promise<Float32Array[]> {
  const done = new Map<string, Float32Array>()
  const out = new Array<Float32Array>(texts.length)
  for (const [i, text] of texts.entries()) {
    let vector = done.get(text)
    if (!vector) {
      vector = await embedAlone(tokenizer, session, text)
      done.set(text, vector)
    }
    out[i] = vector
  }
  return out
}

/** The onnxruntime session under Transformers.js's model: what embedAlone asks of it. */
interface OrtSession {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  run(feeds: Record<string, unknown>, fetches: readonly string[]): Promise<Record<string, TensorLike>>
  release?(): Promise<void>
}

/** onnxruntime-common's InferenceSession class, whose create() Transformers.js called for `published`. */
interface OrtSessionClass {
  create(model: Uint8Array, options: Record<string, unknown>): Promise<OrtSession>
}

/**
 * The published graph's session replaced by one of the same graph trimmed for lone texts (model-graph.ts:
 * constant Reshape shapes, no attention mask): the same outputs bit for bit for a text run alone, which
 * is how embedAlone runs every text, 9–12 % less CPU per text. Created by the class
 * that created `published`, so on the very onnxruntime Transformers.js runs, with the same thread
 * settings. A model file that is not the graph the edit was made for keeps its published session.
 */
async function withFewerNodes(
  published: OrtSession,
  bytes: Buffer | undefined,
): Promise<{ session: OrtSession; nodes?: number }> {
  if (!bytes) return { session: published }
  let session: OrtSession
  let nodes: number
  try {
    const edited = leanGraphForLoneTexts(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    const sessions = published.constructor as unknown as Partial<OrtSessionClass>
    if (!edited || typeof sessions.create !== 'function') return { session: published }
    session = modelSession({
      model: await sessions.create(edited.bytes, { intraOpNumThreads: 1, interOpNumThreads: 1 }),
    })
    nodes = edited.nodes
  } catch {
    // An edit onnxruntime refuses costs the speed, never the model.
    return { session: published }
  }
  await published.release?.()
  return { session, nodes }
}

const INPUTS = ['input_ids', 'attention_mask', 'token_type_ids']
const OUTPUT = 'last_hidden_state'

function modelSession(sessions: Record<string, unknown>): OrtSession {
  const session = sessions.model as OrtSession | undefined
  const inputs = [...(session?.inputNames ?? [])].sort()
  if (inputs.join() !== [...INPUTS].sort().join()) {
    throw new Error(`the model's inputs are ${inputs.join(', ') || 'unknown'}, not ${INPUTS.join(', ')}`)
  }
  return session!
}

/** A lone text's attention mask (every token) and token types (all of the first segment), shared. */
const ONES = new BigInt64Array(MAX_TOKENS).fill(1n)
const ZEROS = new BigInt64Array(MAX_TOKENS)

/**
 * One text through the model, with less work per call than Transformers.js's `model(tokenizer(text))`,
 * and the same vector bit for bit (embedding-model.model.test.ts): the token ids as numbers, converted
 * once (the tokenizer's tensors convert each of its three inputs from BigInt); the attention mask and
 * token types of a lone text (all ones, all zeros) viewed from constant buffers; the onnxruntime session
 * run directly, asked for one output: the trimmed graph's sums over the tokens (384 float64, model-graph.ts),
 * else the states (tokens × 384 float32) summed here; the mean taken over every token, with no mask to read.
 * A text is never padded nor batched here: the graph trimmed for lone texts (model-graph.ts) ignores the
 * attention mask, which for a lone text is all ones.
 */
async function embedAlone(
  tokenizer: PreTrainedTokenizer,
  session: OrtSession,
  text: string,
): Promise<Float32Array> {
  const { input_ids } = tokenizer(text.slice(0, MAX_CHARS), {
    truncation: true,
    max_length: MAX_TOKENS,
    return_tensor: false,
  }) as unknown as { input_ids: number[] }
  const tokens = input_ids.length
  const ids = new BigInt64Array(tokens)
  for (let j = 0; j < tokens; j++) ids[j] = BigInt(input_ids[j]!)
  const dims = [1, tokens]
  const pooledInGraph = session.outputNames.includes(TOKEN_SUMS)
  const output = pooledInGraph ? TOKEN_SUMS : OUTPUT
  const outputs = await session.run(
    {
      input_ids: new Tensor('int64', ids, dims).ort_tensor,
      attention_mask: new Tensor('int64', ONES.subarray(0, tokens), dims).ort_tensor,
      token_type_ids: new Tensor('int64', ZEROS.subarray(0, tokens), dims).ort_tensor,
    },
    [output],
  )
  return pooledInGraph
    ? normalizedMean(outputs[output]!.data as Float64Array, tokens)
    : meanPooledNormalizedAlone(outputs[output]!)
}

/**
 * meanPooledNormalized of a batch of one text without padding: the mask is all ones, so each sum adds the
 * token states themselves (x × 1 is x), token by token in the same order, then divides by the count of
 * tokens. Summed row by row rather than column by column: the same additions, read in memory order.
 */
export function meanPooledNormalizedAlone(state: TensorLike): Float32Array {
  const [batch, tokens, dim] = state.dims as [number, number, number]
  if (batch !== 1) throw new Error(`one text's states expected, not ${batch}`)
  const hidden = state.data as Float32Array
  const sums = new Float64Array(dim)
  for (let j = 0; j < tokens; j++) {
    const offset = j * dim
    for (let k = 0; k < dim; k++) sums[k] = sums[k]! + hidden[offset + k]!
  }
  return normalizedMean(sums, tokens)
}

/**
 * The rest of meanPooledNormalizedAlone from the float64 sums of each dimension over the tokens (the
 * trimmed graph's TOKEN_SUMS, or summed here): each divided by the count of tokens and stored as float32,
 * then L2-normalized with the norm accumulated in float32, as Transformers.js does.
 */
export function normalizedMean(sums: Float64Array, tokens: number): Float32Array {
  const dim = sums.length
  const row = new Float32Array(dim)
  for (let k = 0; k < dim; k++) row[k] = sums[k]! / tokens
  const squares = new Float32Array(1)
  for (let k = 0; k < dim; k++) squares[0] = squares[0]! + row[k]! ** 2
  squares[0] = squares[0]! ** (1 / 2)
  for (let k = 0; k < dim; k++) row[k] = row[k]! / squares[0]!
  return row
}

interface TensorLike {
  readonly data: ArrayLike<number | bigint>
  readonly dims: readonly number[]
}

/**
 * The sentence embeddings of a batch: the mean of each text's token states over its attention mask, then
 * L2-normalized. The very arithmetic of Transformers.js's `mean_pooling(state, mask).normalize(2, -1)`,
 * in the same order (float64 sums stored as float32, the norm accumulated in float32), so the vectors are
 * bit for bit the same (embedding-model.test.ts), without its conversion of the mask from BigInt for every
 * one of the 384 dimensions of every token: that took a sixth of the model thread's time.
 */
export function meanPooledNormalized(state: TensorLike, attentionMask: TensorLike): Float32Array[] {
  const [batch, tokens, dim] = state.dims as [number, number, number]
  const hidden = state.data as Float32Array
  const mask = new Float64Array(batch * tokens)
  for (let i = 0; i < mask.length; i++) mask[i] = Number(attentionMask.data[i])
  const out: Float32Array[] = []
  for (let i = 0; i < batch; i++) {
    const row = new Float32Array(dim)
    const offset = i * dim * tokens
    const maskOffset = i * tokens
    for (let k = 0; k < dim; k++) {
      let sum = 0
      let count = 0
      for (let j = 0; j < tokens; j++) {
        const attn = mask[maskOffset + j]!
        count += attn
        sum += hidden[offset + k + j * dim]! * attn
      }
      row[k] = sum / count
    }
    const squares = new Float32Array(1)
    for (let k = 0; k < dim; k++) squares[0] = squares[0]! + row[k]! ** 2
    squares[0] = squares[0]! ** (1 / 2)
    for (let k = 0; k < dim; k++) row[k] = row[k]! / squares[0]!
    out.push(row)
  }
  return out
}

/** Why the model could not be downloaded: Transformers.js reports a missing file, whatever the cause. */
async function hubProblem(hubUrl: string): Promise<string> {
  const url = new URL(`${EMBEDDING_MODEL_ID}/resolve/main/config.json`, hubUrl)
  try {
    const response = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(10_000) })
    return response.ok ? 'the download failed' : `${url} answered ${response.status}`
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    return `cannot reach it (${cause?.code ?? cause?.message ?? (err as Error).message})`
  }
}
