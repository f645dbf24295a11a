/**
 * Clustering measures against labelled data. NMI as scikit-learn's normalized_mutual_info_score
 * (arithmetic mean of the entropies): 1 when the clustering and the labels coincide, 0 when independent.
 */
export function normalizedMutualInformation(labels: readonly string[], clusters: readonly string[]): number {
  if (labels.length !== clusters.length) throw new Error('labels and clusters differ in length')
  const n = labels.length
  if (n === 0) return 1
  const joint = new Map<string, number>()
  const a = new Map<string, number>()
  const b = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    const key = `${labels[i]}\u0000${clusters[i]}`
    joint.set(key, (joint.get(key) ?? 0) + 1)
    a.set(labels[i]!, (a.get(labels[i]!) ?? 0) + 1)
    b.set(clusters[i]!, (b.get(clusters[i]!) ?? 0) + 1)
  }
  const entropy = (counts: Map<string, number>) =>
    -[...counts.values()].reduce((h, c) => h + (c / n) * Math.log(c / n), 0)
  const ha = entropy(a)
  const hb = entropy(b)
  // Both trivial (one label, one cluster): identical partitions.
  if (ha === 0 && hb === 0) return 1
  let mi = 0
  for (const [key, c] of joint) {
    const [la, cb] = key.split('\u0000') as [string, string]
    mi += (c / n) * Math.log((c * n) / (a.get(la)! * b.get(cb)!))
  }
  const denominator = (ha + hb) / 2
  return denominator === 0 ? 0 : Math.max(0, mi / denominator)
}
