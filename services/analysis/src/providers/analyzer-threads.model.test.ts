/**
 * Closing the language model's analyzer threads while the model runs. A thread stopped inside a call into
 * onnxruntime (Worker.terminate(), as close() once did) aborted the whole process with "terminate called
 * after throwing an instance of 'Napi::Error'": hence in a process of its own here.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { describeWithTestModel, TEST_MODEL_SOURCE } from '../../test/test-model.ts'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))

/** Starts one model thread, asks it for `texts` embeddings, closes the threads once it is at work. */
const SCRIPT = `
const { tsImport } = await import('tsx/esm/api')
const { module, source, texts } = JSON.parse(process.argv[1])
const { startAnalyzerThreads } = await tsImport(module, module)
const threads = await startAnalyzerThreads(1, { mode: 'semantic', source })
const asked = threads.semantic.embedTexts(Array.from({ length: texts }, (_, i) => 'my refund number ' + i + ' has not arrived'))
const outcome = asked.then(() => 'answered', (err) => 'failed: ' + err.message)
// Its first replies have not come: the thread is inside its model calls (each a few ms).
await new Promise((resolve) => setTimeout(resolve, 100))
await threads.close()
console.log('closed; the request in flight ' + (await Promise.race([outcome, new Promise((r) => setTimeout(() => r('pending'), 1000))])))
`

function closeWhileEmbedding(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const input = {
    module: new URL('./analyzer-threads.ts', import.meta.url).href,
    source: TEST_MODEL_SOURCE,
    texts: 2000,
  }
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT, JSON.stringify(input)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

describeWithTestModel('the language model in analyzer threads, closed', () => {
  it('close() while the model runs ends the thread between two model calls: the process lives on (no Napi::Error abort), the request in flight fails as retryable', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { code, stdout, stderr } = await closeWhileEmbedding()
      expect(stderr).not.toContain('terminate called')
      expect(code, stderr).toBe(0)
      expect(stdout).toContain('closed; the request in flight failed: the analyzer is closed')
    }
  }, 120_000)
})
