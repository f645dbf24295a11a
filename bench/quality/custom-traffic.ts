/**
 * Cross-fitting folds for a chatbot's own signals against its own traffic (bench/custom-traffic.ts): each
 * fold scores some of a signal's messages against a "traffic" made of others of the same signal, positives
 * and negatives alike (real traffic holds the signal too). Halves: by position (even, odd) within the
 * positives and within the negatives, each half the other's traffic. Leave one out: each message against
 * every other. No message is ever in its own traffic, and each is scored exactly once.
 */
export interface Labelled<T> {
  readonly item: T
  readonly positive: boolean
}

export interface TrafficFold<T> {
  readonly scored: readonly Labelled<T>[]
  readonly traffic: readonly Labelled<T>[]
}

export function trafficFolds<T>(
  positives: readonly T[],
  negatives: readonly T[],
  leaveOneOut: boolean,
): TrafficFold<T>[] {
  const all: Labelled<T>[] = [
    ...positives.map((item) => ({ item, positive: true })),
    ...negatives.map((item) => ({ item, positive: false })),
  ]
  if (leaveOneOut) return all.map((m) => ({ scored: [m], traffic: all.filter((o) => o !== m) }))
  const half = (h: number) => [
    ...all.slice(0, positives.length).filter((_, i) => i % 2 === h),
    ...all.slice(positives.length).filter((_, i) => i % 2 === h),
  ]
  return [0, 1].map((h) => ({ scored: half(1 - h), traffic: half(h) }))
}
