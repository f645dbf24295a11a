import { describe } from 'vitest'
import {
  hasTestModel,
  requireTestModel,
  TEST_MODEL_DIR,
  UNREACHABLE_HUB,
} from '../../../test/support/model.ts'
import { createSemanticAnalyzer, type SemanticAnalyzer } from '../src/providers/semantic.ts'

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
  return createSemanticAnalyzer({
    modelDir: TEST_MODEL_DIR,
    cacheDir: TEST_MODEL_DIR,
    hubUrl: UNREACHABLE_HUB,
  })
}
