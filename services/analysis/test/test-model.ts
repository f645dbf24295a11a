import { describe } from 'vitest'
import {
  hasTestModel,
  requireTestModel,
  TEST_MODEL_DIR,
  UNREACHABLE_HUB,
} from '../../../test/support/model.ts'
import { type EmbeddingModel, loadEmbeddingModel } from '../src/providers/embedding-model.ts'
import { createSemanticAnalyzer, type SemanticAnalyzer } from '../src/providers/semantic.ts'
import type { WindowPoint } from '../src/topics/recluster.ts'
import { createTermExtractor } from '../src/topics/terms.ts'

/**
 * A describe block of tests on the test model (test/support/model.ts): skipped, and said so loudly,
 * where there is no model; never skipped in CI, where requireTestModel throws instead.
 */
export function describeWithTestModel(name: string, tests: () => void): void {
  requireTestModel()
  describe.skipIf(!hasTestModel)(name, tests)
}

/** The semantic analyzer on the test model, never reaching for the hub (the caller closes it). */
export function createTestSemanticAnalyzer(): Promise<SemanticAnalyzer> {
  return createSemanticAnalyzer(TEST_MODEL_SOURCE)
}

/** Where the tests load the model from: the test model, never the hub. */
export const TEST_MODEL_SOURCE = {
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
}

/** The embedding model alone, on the test model. */
export function loadTestEmbeddingModel(): Promise<EmbeddingModel> {
  return loadEmbeddingModel(TEST_MODEL_SOURCE)
}

/**
 * The topic tests' window points with the real model: each text embedded and its terms extracted, as a
 * re-clustering window holds them, in `topicId`; conversation ids `${request}-${i}`.
 */
export function modelWindowPoints(
  model: EmbeddingModel,
): (request: string, texts: readonly string[], topicId: string) => Promise<WindowPoint[]> {
  const terms = createTermExtractor()
  return async (request, texts, topicId) => {
    const embeddings = await model.embed(texts)
    return texts.map((text, i) => ({
      conversationId: `${request}-${i}`,
      messageId: 'm',
      embedding: embeddings[i]!,
      terms: terms.terms(text),
      topicId,
    }))
  }
}
