/**
 * The CPU the signal readings cost per end-user message, outside the model: the development sets'
 * conversations (quality/datasets.ts, as bench:analysis builds them), their units embedded once with the
 * language model, then the readings the service runs on them in its main thread, many times, timed by the
 * process's CPU (user + system, process.cpuUsage: not wall-clock, which a shared machine makes noise of).
 *
 *   npm run bench:signal-cost [-- --set clinc150|dstc11|both|signals|all --limit N --rounds 30 --base REV]
 *
 * `signals` is the signals' first development set (bench/data/signals/conversations.json: multi-turn, the
 * assistant's replies its own, not a boilerplate scored once); `all` the three.
 *
 * First the anchors' embedding, once per process, by the model (CPU of this thread's model): the built-in
 * cues' anchors, and the chatbots' own signals' generic background apart (signals-v43: embedded only for a
 * chatbot with signals of its own, signals/scorer.ts). Then readings, per end-user message of the set: the
 * cues (cues.ts cuesFrom with the learned heads, on the messages the service scores: each distinct text
 * once, as signals/scorer.ts keeps the cues of texts seen, so a set's repeated greetings and bot replies are
 * scored once), the detection (detect.ts detectSignals on each conversation, once: a job's commit) and the
 * cues' JSON written and read back (every message's, as a commit writes them and the decision reads them),
 * with its bytes. Then a table of the cues' parts, each timed alone on the same texts and vectors: the
 * lexical helpers, the anchors' similarities and the learned heads. The cues are given the analyzer's
 * similarities of each end user's whole text to the social and request anchors, as the service's scorer passes
 * them on (MessageAnalysis.anchorSimilarities). Then the topics' request gate (topics/requests.ts, the analyzer
 * thread's, every end-user message) and the copy of the analyzer's results between threads (structuredClone),
 * with and without those similarities.
 *
 * `--base REV` extracts services/analysis/src at REV (git archive, into bench/.cache/signal-cost) and times
 * its cuesFrom and detectSignals beside this checkout's, in alternating rounds in this one process (A/B
 * under the same load), and checks that both give the same cues and signals for every message.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { SemanticAbilities } from '../services/analysis/src/analyzer.ts'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import * as currentCues from '../services/analysis/src/signals/cues.ts'
import * as currentDetect from '../services/analysis/src/signals/detect.ts'
import { GENERIC_REQUESTS } from '../services/analysis/src/signals/generic-requests.ts'
import { termsOf } from '../services/analysis/src/signals/terms.ts'
import { REPLY_REQUEST_ANCHORS } from '../services/analysis/src/topics/answers.ts'
import * as currentRequests from '../services/analysis/src/topics/requests.ts'
import { dot, type Vector } from '../services/analysis/src/topics/vectors.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { type CapturedMessage, conversationOf, loadSet, SET_NAMES, type SetName } from './quality/datasets.ts'
import { loadSignalsSet } from './quality/signals.ts'
import { seededRandom } from './support/random.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    set: { type: 'string', default: 'both' },
    limit: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '30' },
    base: { type: 'string' },
    'greeting-share': { type: 'string', default: '0.3' },
    seed: { type: 'string', default: '1' },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
  },
})
const rounds = Number(values.rounds)
const seed = Number(values.seed)
/** `signals`: the signals' first development set (bench/data/signals/conversations.json), bots' replies of their own. */
const setNames: (SetName | 'signals')[] =
  values.set === 'both'
    ? [...SET_NAMES]
    : values.set === 'all'
      ? [...SET_NAMES, 'signals']
      : [values.set as SetName]

type CuesModule = typeof currentCues
type DetectModule = typeof currentDetect
type RequestsModule = typeof currentRequests
interface Variant {
  readonly name: string
  readonly cues: CuesModule
  readonly detect: DetectModule
  readonly requests: RequestsModule
}

/** services/analysis/src at `rev`, extracted once, its signal modules imported beside this checkout's. */
async function variantAt(rev: string): Promise<Variant> {
  const commit = execFileSync('git', ['rev-parse', '--short', rev], { cwd: ROOT, encoding: 'utf8' }).trim()
  const dir = path.join(ROOT, 'bench/.cache/signal-cost', commit)
  if (!existsSync(path.join(dir, 'services/analysis/src/signals/cues.ts'))) {
    mkdirSync(dir, { recursive: true })
    const archive = path.join(dir, 'src.tar')
    execFileSync('git', ['archive', '--output', archive, commit, 'services/analysis/src'], { cwd: ROOT })
    // Without its tests: a test runner finds no copy of them here.
    execFileSync('tar', ['-x', '-f', archive, '-C', dir, '--exclude=*.test.ts'])
  }
  const signals = path.join(dir, 'services/analysis/src/signals')
  return {
    name: commit,
    cues: (await import(path.join(signals, 'cues.ts'))) as CuesModule,
    detect: (await import(path.join(signals, 'detect.ts'))) as DetectModule,
    requests: (await import(path.join(dir, 'services/analysis/src/topics/requests.ts'))) as RequestsModule,
  }
}

const current: Variant = {
  name: 'this checkout',
  cues: currentCues,
  detect: currentDetect,
  requests: currentRequests,
}
const variants = values.base ? [await variantAt(values.base), current] : [current]

const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const semantic: SemanticAbilities = analyzer.semantic
const anchors = await currentCues.embedSignalAnchors(semantic.embedTexts)
// The topics' request gate's anchors, as providers/semantic.ts embeds them (the analyzer thread). Both the
// earlier interface (anyRequest: requests of every kind) and the later (otherRequest: those after the support
// requests) are given, so that either revision reads its own.
const replyRequests = await semantic.embedTexts(REPLY_REQUEST_ANCHORS)
const gateAnchors = {
  social: await semantic.embedTexts(currentRequests.TOPIC_SOCIAL_ANCHORS),
  request: await semantic.embedTexts(currentRequests.REQUEST_ANCHORS),
  anyRequest: replyRequests,
  otherRequest: replyRequests.slice(currentRequests.REQUEST_ANCHORS.length),
}

/** CPU microseconds (user + system) that `work` takes. */
function cpuOf(work: () => void): number {
  const before = process.cpuUsage()
  work()
  const used = process.cpuUsage(before)
  return used.user + used.system
}
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** CPU microseconds that `work` takes, awaited (the model runs in this thread: createSemanticAnalyzer). */
async function cpuOfAsync(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage()
  await work()
  const used = process.cpuUsage(before)
  return used.user + used.system
}

console.log(
  `signal readings' CPU, Node ${process.version}, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}, ${rounds} rounds`,
)
// The anchors' embedding, once per process (signals/scorer.ts): the model uncached, the generic background
// (signals-v43) apart, as the scorer now embeds it only for a chatbot with signals of its own.
{
  const builtinTexts: string[] = []
  await currentCues.embedSignalAnchors(async (texts) => {
    builtinTexts.push(...texts.slice(0, texts.length - GENERIC_REQUESTS.length))
    return texts.map(() => new Float32Array(0))
  })
  await analyzer.model.embed(builtinTexts.slice(0, 32))
  const builtinMs = (await cpuOfAsync(() => analyzer.model.embed(builtinTexts))) / 1000
  const genericMs = (await cpuOfAsync(() => analyzer.model.embed(GENERIC_REQUESTS))) / 1000
  console.log(
    `anchors embedded once per process: built-in ${builtinTexts.length} texts ${builtinMs.toFixed(0)} ms CPU, generic background ${GENERIC_REQUESTS.length} texts ${genericMs.toFixed(0)} ms CPU`,
  )
}
for (const setName of setNames) {
  const random = seededRandom(seed)
  const conversations: CapturedMessage[][] =
    setName === 'signals'
      ? loadSignalsSet().map((c) =>
          c.messages.map(([role, content], i) => ({ id: String(i), role, content })),
        )
      : loadSet(setName, values.data, { seed, limit: Number(values.limit) }).requests.map((r, i) =>
          conversationOf(r.text, i, { greetingShare: Number(values['greeting-share']), random }),
        )
  const userMessages = conversations.flat().filter((m) => m.role === 'user').length
  // The messages the service scores: each role and text once (signals/scorer.ts, no custom signals).
  const distinct = [
    ...new Map(conversations.flat().map((m) => [`${m.role}\u0000${m.content}`, m] as const)).values(),
  ]
  const units = distinct.map(currentCues.unitsOf)
  const vectors = await semantic.embedTexts(units.flat())
  // What the analyzer hands the cues (MessageAnalysis.anchorSimilarities: the topics' gate's similarities of an
  // end user's whole text to the social and request anchors), as signals/scorer.ts passes them on: a revision
  // without that parameter ignores them.
  const analysed = await analyzer.analyzeMessages(distinct, {})
  const given = distinct.map((m, i) =>
    units[i]![0] === m.content.trim() ? analysed[i]!.anchorSimilarities : undefined,
  )
  const scoreWith = (v: Variant) =>
    v.cues.cuesFrom(
      distinct,
      units,
      vectors,
      anchors,
      [],
      semantic.frustrationOf,
      semantic.escalationOf,
      semantic.handoverOf,
      semantic.displeasureOf,
      given,
      semantic.gratitudeOf,
    )
  const start = Date.UTC(2026, 0, 1)
  const settings = {
    disabled: new Set<string>(),
    custom: [],
    quietPeriodMs: currentDetect.DEFAULT_QUIET_PERIOD_MS,
  }
  const now = new Date(start + 10 * 60_000 + currentDetect.DEFAULT_QUIET_PERIOD_MS)
  const conversationsWith = (scored: readonly (currentCues.ScoredMessage | undefined)[]) => {
    const byKey = new Map(distinct.map((m, i) => [`${m.role}\u0000${m.content}`, scored[i]]))
    return conversations.map((c) =>
      c.map((m, i) => {
        const s = byKey.get(`${m.role}\u0000${m.content}`)
        return {
          id: m.id,
          role: m.role,
          sentAt: new Date(start + i * 60_000),
          cues: s?.cues,
          vector: s?.vector,
        }
      }),
    )
  }
  const detectWith = (v: Variant, input: ReturnType<typeof conversationsWith>) =>
    input.map((c) => v.detect.detectSignals(c, settings, now))

  console.log(
    `\n${setName}: ${conversations.length} conversations, ${userMessages} end-user messages, ${distinct.length} distinct texts scored (${units.flat().length} units)`,
  )
  const inputs = new Map(variants.map((v) => [v, conversationsWith(scoreWith(v))]))
  if (variants.length === 2) {
    const [a, b] = variants as [Variant, Variant]
    const same =
      JSON.stringify(scoreWith(a)) === JSON.stringify(scoreWith(b)) &&
      JSON.stringify(detectWith(a, inputs.get(a)!)) === JSON.stringify(detectWith(b, inputs.get(b)!))
    console.log(`  cues and signals of ${a.name} and ${b.name} identical: ${same ? 'yes' : 'NO'}`)
  }
  // What a job's commit writes of each message's cues (job-runner.ts: one JSON array) and the signals' decision
  // reads back (signals/store.ts: Postgres's jsonb, parsed by pg): JSON out and in, every message of every
  // conversation.
  const storeWith = (input: ReturnType<typeof conversationsWith>) =>
    input.map((c) => JSON.parse(JSON.stringify(c.map((m) => m.cues ?? null))) as unknown[])
  const bytesOf = (input: ReturnType<typeof conversationsWith>) =>
    input.reduce((sum, c) => sum + JSON.stringify(c.map((m) => m.cues ?? null)).length, 0)
  const cuesCpu = new Map(variants.map((v) => [v, [] as number[]]))
  const detectCpu = new Map(variants.map((v) => [v, [] as number[]]))
  const storeCpu = new Map(variants.map((v) => [v, [] as number[]]))
  for (let round = 0; round < rounds; round++) {
    // Alternating, and the order swapped each round: neither variant always runs after the other's garbage.
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const v of order) {
      cuesCpu.get(v)!.push(cpuOf(() => scoreWith(v)))
      detectCpu.get(v)!.push(cpuOf(() => detectWith(v, inputs.get(v)!)))
      storeCpu.get(v)!.push(cpuOf(() => storeWith(inputs.get(v)!)))
    }
  }
  const perMessage = (us: number) => (us / userMessages).toFixed(2).padStart(7)
  console.log(
    '  CPU µs per end-user message (median of rounds)     cues  detect   total   cues JSON out+in (bytes)',
  )
  for (const v of variants) {
    const c = median(cuesCpu.get(v)!)
    const d = median(detectCpu.get(v)!)
    const j = median(storeCpu.get(v)!)
    const bytes = (bytesOf(inputs.get(v)!) / userMessages).toFixed(0)
    console.log(
      `  ${v.name.padEnd(48)} ${perMessage(c)} ${perMessage(d)} ${perMessage(c + d)}   ${perMessage(j)} (${bytes})`,
    )
  }

  // The topics' request gate (topics/requests.ts requestEmbeddings), which providers/semantic.ts runs in the
  // analyzer thread on every end-user message with a letter, each job's (no memo by text): its clauses
  // embedded beforehand, so that only the gate's own CPU is timed.
  const gated = conversations
    .flat()
    .filter((m) => m.role === 'user' && m.content.trim() !== '' && /\p{L}/u.test(m.content))
    .map((m) => m.content.trim())
  const gatedVectors = await semantic.embedTexts(gated)
  const clauseTexts = [...new Set(gated.flatMap((t) => currentRequests.clausesOf(t)))]
  const clauseOf = new Map(
    (await semantic.embedTexts(clauseTexts)).map((v, i) => [clauseTexts[i]!, v] as const),
  )
  const clausesEmbedded = async (texts: readonly string[]) => texts.map((t) => clauseOf.get(t)!)
  const gateWith = (v: Variant) =>
    v.requests.requestEmbeddings(gated, gatedVectors, gateAnchors, clausesEmbedded)
  const gateOut = await Promise.all(variants.map(gateWith))
  const gateBits = (out: Awaited<ReturnType<typeof gateWith>>) =>
    JSON.stringify(out.map((p) => (p ? [p.margin, [...new Uint32Array(p.embedding.buffer)]] : null)))
  if (variants.length === 2) {
    const same = gateBits(gateOut[0]!) === gateBits(gateOut[1]!)
    console.log(
      `  the request gate's margins and embeddings of both identical, bit for bit: ${same ? 'yes' : 'NO'}`,
    )
  }
  const gateCpu = new Map(variants.map((v) => [v, [] as number[]]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const v of order) gateCpu.get(v)!.push(await cpuOfAsync(() => gateWith(v)))
  }
  // The analyzer's results go to the main thread by structured clone: with and without the similarities.
  const results = await analyzer.analyzeMessages(
    conversations.flat().filter((m) => m.role === 'user'),
    {},
  )
  const stripped = results.map(({ anchorSimilarities: _, ...rest }) => rest)
  const cloneCpu: [number[], number[]] = [[], []]
  for (let round = 0; round < rounds; round++) {
    cloneCpu[0].push(cpuOf(() => structuredClone(stripped)))
    cloneCpu[1].push(cpuOf(() => structuredClone(results)))
  }
  const requestsPlaced = gateOut.at(-1)!.filter((p) => p !== undefined).length
  console.log(
    `  the topics' request gate (requestEmbeddings, analyzer thread), ${gated.length} messages gated, ${requestsPlaced} placed: CPU µs per end-user message (median of rounds, min–max)`,
  )
  for (const v of variants) {
    const xs = gateCpu.get(v)!
    console.log(
      `    ${v.name.padEnd(46)} ${perMessage(median(xs))}  (${perMessage(Math.min(...xs)).trim()}–${perMessage(Math.max(...xs)).trim()})`,
    )
  }

  console.log(
    `  the analyzer's results copied to the main thread (structuredClone), CPU µs per end-user message: without / with anchorSimilarities ${perMessage(median(cloneCpu[0])).trim()} / ${perMessage(median(cloneCpu[1])).trim()}`,
  )

  // The cues' parts, each alone on the same texts (this checkout's helpers): what the service's main thread
  // spends per end-user message on each, summed over the distinct texts it scores.
  const c = currentCues
  const users = distinct
    .map((m, i) => ({ m, u: units[i]! }))
    .filter((x) => x.m.role === 'user' && x.u.length > 0)
  const bots = distinct
    .map((m, i) => ({ m, u: units[i]! }))
    .filter((x) => x.m.role === 'assistant' && x.u.length > 0)
  const userVectors: Vector[] = []
  const userWholes: Vector[] = []
  const socialAndRequest = [...anchors.social, ...anchors.request]
  let at = 0
  for (const [i, m] of distinct.entries()) {
    const n = units[i]!.length
    if (m.role === 'user') userVectors.push(...vectors.slice(at, at + n))
    if (m.role === 'user' && n > 0) userWholes.push(vectors[at]!)
    at += n
  }
  const userAnchors = [
    ...new Set([
      ...anchors.social,
      ...anchors.request,
      ...anchors.escalation.cue,
      ...anchors.escalation.contrast,
      ...anchors.frustration.cue,
      ...anchors.frustration.contrast,
      ...anchors.resolution.cue,
      ...anchors.resolution.contrast,
      ...anchors.clarification.cue,
      ...anchors.reask.cue,
      ...anchors.reask.contrast,
    ]),
  ]
  // Each part counts its truthy results into `sink`, printed at the end: no call's result goes unused.
  let sink = 0
  const part =
    <T>(items: readonly T[], read: (item: T) => unknown) =>
    () => {
      for (const item of items) if (read(item)) sink++
    }
  const parts: [string, () => void][] = [
    ['unitsOf (sentencesOf)', part(distinct, c.unitsOf)],
    ['user: asksAgainOf', part(users, (x) => c.asksAgainOf(x.m.content))],
    ['user: askedBeforeOf', part(users, (x) => c.askedBeforeOf(x.m.content))],
    ['user: contestsOf', part(users, (x) => c.contestsOf(x.m.content))],
    ['user: followsOnOf', part(users, (x) => c.followsOnOf(x.m.content))],
    ['user: asksAsOf', part(users, (x) => c.asksAsOf(x.m.content))],
    ['user: questionOf', part(users, (x) => c.questionOf(x.m.content))],
    ['user: addsOf (sentences after the first)', part(users, (x) => x.u.slice(2).some(c.addsOf))],
    ['user: statementOf (each unit, v47)', part(users, (x) => x.u.filter(c.statementOf).length)],
    ['user: termsOf (v45)', part(users, (x) => termsOf(x.m.content, 1000).length)],
    [
      `user: anchor similarities (${userAnchors.length} anchors a unit)`,
      part(userVectors, (v) => userAnchors.reduce((sum, a) => sum + dot(v, a), 0)),
    ],
    [
      "user: the whole message's social + request similarities (the gate reads them too, in its thread)",
      part(userWholes, (v) => socialAndRequest.reduce((sum, a) => sum + dot(v, a), 0)),
    ],
    ['user: frustration head (each unit)', part(userVectors, (v) => semantic.frustrationOf?.(v))],
    ['user: escalation head (each unit)', part(userVectors, (v) => semantic.escalationOf?.(v))],
    ['user: displeasure heads (each unit)', part(userVectors, (v) => semantic.displeasureOf?.(v))],
    ['bot: inabilityOf', part(bots, (x) => c.inabilityOf(x.m.content))],
    ['bot: saysNoOf (v46)', part(bots, (x) => c.saysNoOf(x.m.content))],
    [
      'bot: userActsOf + contactsUserOf (each unit, v48)',
      part(bots, (x) => x.u.filter((u) => c.userActsOf(u) || c.contactsUserOf(u)).length),
    ],
    [
      'bot: saidOf + asksForOf + termsOf',
      part(
        bots,
        (x) =>
          c.saidOf(x.m.content).length + c.asksForOf(x.m.content).length + termsOf(x.m.content, 1000).length,
      ),
    ],
  ]
  const partCpu = new Map(parts.map(([name]) => [name, [] as number[]]))
  for (let round = 0; round < rounds; round++) {
    for (const [name, work] of parts) partCpu.get(name)!.push(cpuOf(work))
  }
  console.log("  the cues' parts alone, CPU µs per end-user message (median of rounds)")
  for (const [name] of parts) console.log(`    ${name.padEnd(52)} ${perMessage(median(partCpu.get(name)!))}`)
  console.log(`  (${sink} truthy readings)`)
}
process.exit(0)
