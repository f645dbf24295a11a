/**
 * A ridge logistic regression fitted to its optimum by Newton's method, for the small feature vectors of
 * bench/quality/frustration-loso.ts: deterministic, no learning rate or epochs to choose.
 */

export const sigmoid = (z: number) => 1 / (1 + Math.exp(-z))

/**
 * Ridge logistic regression by Newton's method (iteratively reweighted least squares): minimises the summed
 * log-loss plus l2/2 · |w|² (the bias free), to a step under 1e-9 or 50 iterations. Deterministic.
 */
export function logisticRegression(
  rows: readonly { readonly x: ArrayLike<number>; readonly y: number }[],
  l2: number,
): { weights: Float64Array; bias: number } {
  const d = (rows[0]?.x.length ?? 0) + 1
  const beta = new Float64Array(d)
  const at = (x: ArrayLike<number>, j: number) => (j === d - 1 ? 1 : x[j]!)
  for (let iteration = 0; iteration < 50; iteration++) {
    const gradient = new Float64Array(d)
    const hessian = Array.from({ length: d }, () => new Float64Array(d))
    for (const { x, y } of rows) {
      let z = 0
      for (let j = 0; j < d; j++) z += beta[j]! * at(x, j)
      const p = sigmoid(z)
      const w = Math.max(p * (1 - p), 1e-12)
      for (let j = 0; j < d; j++) {
        const xj = at(x, j)
        gradient[j]! += (p - y) * xj
        const row = hessian[j]!
        for (let k = 0; k <= j; k++) row[k]! += w * xj * at(x, k)
      }
    }
    for (let j = 0; j < d; j++) {
      for (let k = 0; k < j; k++) hessian[k]![j] = hessian[j]![k]!
      if (j < d - 1) {
        gradient[j]! += l2 * beta[j]!
        hessian[j]![j]! += l2
      }
    }
    const step = solve(hessian, gradient)
    let largest = 0
    for (let j = 0; j < d; j++) {
      beta[j]! -= step[j]!
      largest = Math.max(largest, Math.abs(step[j]!))
    }
    if (largest < 1e-9) break
  }
  return { weights: beta.slice(0, d - 1), bias: beta[d - 1]! }
}

/** a · s = b by Gaussian elimination with partial pivoting (a small, symmetric positive-definite system). */
function solve(a: readonly Float64Array[], b: Float64Array): Float64Array {
  const n = b.length
  const m = a.map((row, i) => Float64Array.from([...row, b[i]!]))
  for (let c = 0; c < n; c++) {
    let pivot = c
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[pivot]![c]!)) pivot = r
    ;[m[c], m[pivot]] = [m[pivot]!, m[c]!]
    const top = m[c]!
    for (let r = c + 1; r < n; r++) {
      const row = m[r]!
      const f = row[c]! / top[c]!
      if (f === 0) continue
      for (let k = c; k <= n; k++) row[k]! -= f * top[k]!
    }
  }
  const s = new Float64Array(n)
  for (let r = n - 1; r >= 0; r--) {
    let v = m[r]![n]!
    for (let k = r + 1; k < n; k++) v -= m[r]![k]! * s[k]!
    s[r] = v / m[r]![r]!
  }
  return s
}
