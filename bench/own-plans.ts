/**
 * The end user's own plan, read from the grammar (issue 31 item 4; helpers topics19 and topics20): "whatever, I'll
 * call" made a topic after a request, and no anchor phrase separated it from a request to be called (bench/FINDINGS.md,
 * topics17 and topics18); nor did "I'll check with my bank" or "I'll just do it in the branch" ask anything. What topics/own-plans.ts changes in the topic gate, the analyzer's path
 * (requestEmbeddings, then clauseAsks with FOLLOW_UP_MARGIN for a later message), without it and with it.
 *
 *   npm run bench:own-plans
 *
 * Choose: the end users' later messages of the signal sets' older half (development … fresh6), each listed with its
 * conversation's labels (a plan, or an ask for a person in a conversation labelled escalation: the sets' README).
 * Confirm: the newer half (fresh7 onwards, every development set bench/quality/signals.ts lists outside signals-replay's OLDER_HALF), then CLINC150 validation and test and DSTC11 requests, asked second and
 * asked first (what the rule costs real requests: every one listed). Never a set flagged blind there.
 */
import { loadEmbeddingModel } from '../services/analysis/src/providers/embedding-model.ts'
import { ownPlanClausesOf } from '../services/analysis/src/topics/own-plans.ts'
import { FOLLOW_UP_MARGIN, type OwnPlans } from '../services/analysis/src/topics/requests.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import {
  clincRequests,
  dstc11Requests,
  laterUserMessages,
  signalsSetHalves,
  type Text,
} from './support/texts.ts'
import { gateAnchors, reportWithoutAndWith } from './support/topic-gate.ts'

const model = await loadEmbeddingModel({
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
})
const anchors = await gateAnchors(model)
const NONE: OwnPlans = () => new Set()

const PROBES: Text[] = [
  "whatever, I'll call",
  "I'll just phone the branch tomorrow",
  'ok I will ring them myself',
  "fine, I'll just go to the store",
  'ringing them now. thanks',
  'can someone call me',
  'I want to speak to a person',
  'can someone ring me',
  'can someone just ring me? easier',
  'Then please ask her or her manager to ring me.',
  'then get him to ring me. today.',
  'Please could she call me instead, on 01632 960123',
  "I'd like the bursar to call me, please",
  'can someone from the office ring me back?',
  'is there an actual human i could talk to',
  'let me talk to an actual person',
  'can you find my phone',
  'i want you to call me sheldon',
  // topics20: plans with other verbs, and needs or transactions said in the future, which ask.
  "I'll try the app",
  "I'll just do it in the branch",
  "ok I'll wait",
  "I'll check with my bank",
  "I'll have a look myself",
  "I'll ask for a refund",
  "I'll wait for you to send it",
  "i'm going to need an uber",
  "i'll need a reminder",
  "I'll be travelling to Spain next week",
  "I'll try the app. how do I install it?",
].map((text) => ({ text, where: 'probe' }))

const halves = signalsSetHalves()
const dstc11 = dstc11Requests()

const sets = [
  { name: 'probes, asked after a request', items: PROBES, later: true },
  {
    name: 'signal sets, older half, later messages (choose)',
    items: laterUserMessages(halves.older),
    later: true,
  },
  {
    name: 'signal sets, newer half, later messages (confirm)',
    items: laterUserMessages(halves.newer),
    later: true,
  },
  { name: 'CLINC150 validation, requests asked second', items: clincRequests('val'), later: true },
  { name: 'CLINC150 test, requests asked second', items: clincRequests('test'), later: true },
  { name: 'DSTC11, requests asked second', items: dstc11, later: true },
  {
    name: 'CLINC150 validation and test, requests asked first',
    items: [...clincRequests('val'), ...clincRequests('test')],
    later: false,
  },
  { name: 'DSTC11, requests asked first', items: dstc11, later: false },
]

console.log(
  `Follow-up margin ${FOLLOW_UP_MARGIN}. Messages that make a topic, without → with own plans read:`,
)
const lists = await reportWithoutAndWith(
  model,
  anchors,
  sets,
  { without: { plans: NONE }, with: { plans: ownPlanClausesOf } },
  (set, before, after) =>
    set.items === PROBES
      ? set.items.map(
          (item, i) =>
            `- probe ${JSON.stringify(item.text)}: ${before[i] ? 'topic' : 'none'} → ${after[i] ? 'topic' : 'none'}`,
        )
      : [],
)
console.log(`\n${lists.join('\n')}`)
