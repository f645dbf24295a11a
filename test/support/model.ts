import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * The language model the tests use: `../shared/models` beside the checkout, in the Hugging Face hub's
 * layout (Xenova/all-MiniLM-L6-v2, q8). Tests never download it: our machines cannot reach the hub.
 * ANALYSIS_MODEL_DIR points elsewhere.
 */
export const TEST_MODEL_DIR = path.resolve(
  process.env.ANALYSIS_MODEL_DIR ?? path.join(ROOT, '../shared/models'),
)

export const hasTestModel = existsSync(
  path.join(TEST_MODEL_DIR, 'Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx'),
)

/** Says loudly that the model's tests are skipped; in CI there is no skipping: it throws. */
export function requireTestModel(): void {
  if (hasTestModel) return
  if (process.env.CI === 'true') {
    throw new Error(
      `the language model is required in CI: none at ${TEST_MODEL_DIR} (set ANALYSIS_MODEL_DIR)`,
    )
  }
  console.warn(
    `\n${'!'.repeat(78)}\n!! No language model at ${TEST_MODEL_DIR}: its tests are SKIPPED. Set\n!! ANALYSIS_MODEL_DIR to a folder holding Xenova/all-MiniLM-L6-v2. CI never skips them.\n${'!'.repeat(78)}\n`,
  )
}

/** The configuration of an analyzer on the test model, never reaching for the hub. */
export function modelConfigEnv(): Record<string, string> {
  return { ANALYSIS_MODEL_DIR: TEST_MODEL_DIR, ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB }
}

/** A hub address that refuses at once (port 9, discard): nothing is ever downloaded by a test. */
export const UNREACHABLE_HUB = 'http://127.0.0.1:9/'
