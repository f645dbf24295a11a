/** The benchmarks' seeded PRNG: the service's own, so that a benchmark's data and choices are the same every run. */
export { seededRandom } from '../../services/analysis/src/seeded-random.ts'
