/**
 * Embeddings of a corpus with the analyzer's own model (embedding-model.ts), cached on disk under
 * .cache/sentiment/ (git-ignored), keyed by the model's version and the texts, so that training and the
 * benchmark embed each corpus once. Each text is embedded as the analyzer embeds a message: trimmed.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { type EmbeddingModel, loadEmbeddingModel } from '../src/providers/embedding-model.ts'
import { ROOT } from './corpora.ts'

const CACHE = path.join(ROOT, '.cache/sentiment')
const DIM = 384
const CHUNK = 512

export function modelDir(): string {
  return process.env.ANALYSIS_MODEL_DIR ?? path.join(ROOT, '../shared/models')
}

let loaded: Promise<EmbeddingModel> | undefined
export function embeddingModel(): Promise<EmbeddingModel> {
  loaded ??= loadEmbeddingModel({
    modelDir: modelDir(),
    cacheDir: path.join(CACHE, 'hub'),
    hubUrl: 'http://127.0.0.1:9/',
  })
  return loaded
}

/** The texts' embeddings, from the cache when the same model embedded the same texts before. */
export async function embedCorpus(name: string, texts: readonly string[]): Promise<Float32Array[]> {
  const model = await embeddingModel()
  const key = createHash('sha256').update(model.version).update('\0').update(texts.join('\0')).digest('hex')
  const file = path.join(CACHE, `${name}.${key.slice(0, 16)}.f32`)
  if (existsSync(file)) {
    const buf = readFileSync(file)
    const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4)
    return texts.map((_, i) => all.slice(i * DIM, (i + 1) * DIM))
  }
  const out: Float32Array[] = []
  const started = performance.now()
  for (let i = 0; i < texts.length; i += CHUNK) {
    out.push(...(await model.embed(texts.slice(i, i + CHUNK).map((t) => t.trim()))))
    const rate = out.length / ((performance.now() - started) / 1000)
    process.stderr.write(`\r  ${name}: ${out.length}/${texts.length} (${rate.toFixed(0)}/s)   `)
  }
  process.stderr.write('\n')
  mkdirSync(CACHE, { recursive: true })
  const all = new Float32Array(texts.length * DIM)
  out.forEach((v, i) => {
    all.set(v, i * DIM)
  })
  writeFileSync(file, Buffer.from(all.buffer))
  return out
}

/**
 * Each item's parts (its sentences, say) embedded as one corpus (embedCorpus, `name`) and given back per
 * item, in order: `parts[i]` has one vector per string of `items[i]`.
 */
export async function embedParts(
  name: string,
  items: readonly (readonly string[])[],
): Promise<Float32Array[][]> {
  const flat = await embedCorpus(name, items.flat())
  let at = 0
  return items.map((strings) => {
    const out = flat.slice(at, at + strings.length)
    at += strings.length
    return out
  })
}
