import { beforeAll, describe, expect, it } from 'vitest'
import { hasTestModel, requireTestModel } from '../../../../test/support/model.ts'
import { loadTestEmbeddingModel, modelWindowPoints } from '../../test/test-model.ts'
import { addTopic } from '../../test/topic-fixtures.ts'
import { labelKey } from './labels.ts'
import { clusteringInput, decideRecluster, type WindowPoint } from './recluster.ts'
import { emptyTopicState, OTHER_TOPIC, type Topic, type TopicState } from './topic-model.ts'
import { windowClusters } from './window-clusters.ts'

// Given a chatbot whose topics include a held one (configured in settings.topics, or pinned: renamed or
// created from examples by a user), when its window is re-clustered with the real model's embeddings and
// the real clustering, then the held topic keeps its members and its label, the same requests waiting
// in "other" or held by a discovered topic end in it, and no discovered topic duplicates it.
requireTestModel()

/** One insurer's requests, hand-written: close together, as one domain's are. */
const CLAIM = [
  'I need to file a claim for my car accident',
  'How do I report a claim after a fender bender?',
  'I want to open a claim, someone hit my car',
  'Can I submit an insurance claim for hail damage?',
  'start a new claim for my damaged vehicle',
  'my car was hit in a parking lot and I need to make a claim',
  'I need to claim for a cracked windshield',
  'how do I file an accident claim',
  'someone rear-ended me, I want to report a claim',
  'open an insurance claim for the dent in my car',
  'file a claim for storm damage to my vehicle',
  'I was in a crash and need to start a claim',
]
const DRIVER = [
  'I want to add my daughter as a driver',
  'How do I add a new driver to my policy?',
  'please put my husband on my car insurance',
  'can I add my son to my auto policy, he just got his license',
  'add another driver to my plan',
  'add my wife to the policy as a second driver',
  'I need to list my teenager as a driver on my insurance',
  'how can I add a driver to my car coverage',
]
const BILL = [
  'I want to pay my insurance bill',
  'How can I make a payment on my policy?',
  'pay my premium online please',
  "I need to pay this month's bill",
  'where do I pay my insurance invoice?',
  'I would like to pay my bill by card',
  'can I pay my premium with a credit card',
  'how do I make my monthly insurance payment',
]

const PINNED = '00000000-0000-4000-9000-000000000001'
const DISCOVERED = '00000000-0000-4000-9000-000000000002'
const DUPLICATE = '00000000-0000-4000-9000-000000000003'

describe.skipIf(!hasTestModel)('re-clustering around held topics, with the language model', () => {
  let points: ReturnType<typeof modelWindowPoints>
  beforeAll(async () => {
    points = modelWindowPoints(await loadTestEmbeddingModel())
  })

  /** A topic holding these members (its sum, terms and spread theirs). */
  const topic = (state: TopicState, id: string, label: string, members: readonly WindowPoint[]): Topic =>
    addTopic(state, id, label, members)

  function recluster(state: TopicState, window: WindowPoint[]) {
    const { points: clustered, references } = clusteringInput(state, window)
    let next = 100
    return decideRecluster(
      state,
      clustered,
      windowClusters(
        clustered.map((p) => p.embedding),
        references,
      ),
      { newId: () => `00000000-0000-4000-9000-${String(next++).padStart(12, '0')}` },
    )
  }

  function activeLabels(state: TopicState): string[] {
    return [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired).map((t) => t.label)
  }

  for (const held of ['pinned', 'configured'] as const) {
    it(`a ${held} topic takes its request's waiting messages: no discovered topic duplicates it`, async () => {
      const members = await points('claim', CLAIM.slice(0, 4), PINNED)
      const waiting = await points('claim-later', CLAIM.slice(4), OTHER_TOPIC)
      const drivers = await points('driver', DRIVER, DISCOVERED)
      const bills = await points('bill', BILL, OTHER_TOPIC)
      const state = emptyTopicState('bot')
      Object.assign(topic(state, PINNED, 'Car claims', members), { [held]: true })
      topic(state, DISCOVERED, 'driver, add', drivers)
      const decision = recluster(state, [...members, ...waiting, ...drivers, ...bills])

      // The held topic keeps its members and label, and takes the later claims.
      expect(state.topics.get(PINNED)).toMatchObject({
        label: 'Car claims',
        mergedInto: null,
        retired: false,
      })
      expect(state.topics.get(PINNED)!.size).toBe(CLAIM.length)
      const moved = new Map(decision.reassigned.map((r) => [r.conversationId, r.topicId]))
      for (const p of waiting) expect(moved.get(p.conversationId), p.conversationId).toBe(PINNED)
      for (const p of members) expect(moved.has(p.conversationId)).toBe(false)
      // No discovered topic holds a claim; the bills make one of their own.
      const discovered = decision.events.filter((e) => e.type === 'analysis.topic-discovered')
      const claimed = new Set(
        decision.reassigned.filter((r) => r.conversationId.startsWith('claim')).map((r) => r.topicId),
      )
      for (const e of discovered) expect(claimed.has(e.payload.topicId as string)).toBe(false)
      expect(new Set(bills.map((p) => moved.get(p.conversationId))).size).toBe(1)
      expect(moved.get(bills[0]!.conversationId)).not.toBe(PINNED)
      const labels = activeLabels(state)
      expect(new Set(labels.map(labelKey)).size).toBe(labels.length)
    })
  }

  it('a discovered topic of the same request as a pinned one merges into it, by an event', async () => {
    const members = await points('claim', CLAIM.slice(0, 6), PINNED)
    const copies = await points('claim-copy', CLAIM.slice(6), DUPLICATE)
    const drivers = await points('driver', DRIVER, DISCOVERED)
    const state = emptyTopicState('bot')
    topic(state, PINNED, 'Car claims', members).pinned = true
    topic(state, DUPLICATE, 'claim, accident', copies)
    topic(state, DISCOVERED, 'driver, add', drivers)
    const decision = recluster(state, [...members, ...copies, ...drivers])
    expect(decision.events).toEqual([
      { type: 'analysis.topic-merged', payload: { topicId: DUPLICATE, into: PINNED } },
    ])
    expect(state.topics.get(DUPLICATE)!.mergedInto).toBe(PINNED)
    expect(state.topics.get(PINNED)).toMatchObject({ label: 'Car claims', size: CLAIM.length })
    expect(state.topics.get(DISCOVERED)).toMatchObject({ label: 'driver, add', mergedInto: null })
  })

  it('a cluster that lumps a held topic with a distinct request does not merge that request into it', async () => {
    // A given clustering (one cluster of everything): the model judges who lies inside the held topic.
    const members = await points('claim', CLAIM, PINNED)
    const drivers = await points('driver', DRIVER, DISCOVERED)
    const state = emptyTopicState('bot')
    topic(state, PINNED, 'Car claims', members).pinned = true
    topic(state, DISCOVERED, 'driver, add', drivers)
    const window = [...members, ...drivers]
    const { points: clustered } = clusteringInput(state, window)
    const decision = decideRecluster(
      state,
      clustered,
      clustered.map(() => 0),
      { newId: () => 'unused' },
    )
    expect(decision.events).toEqual([])
    expect(decision.reassigned).toEqual([])
    expect(state.topics.get(DISCOVERED)).toMatchObject({ mergedInto: null, size: DRIVER.length })
    expect(state.topics.get(PINNED)!.size).toBe(CLAIM.length)
  })

  it("relabels a discovered topic that has a held topic's label (compared as a reader does)", async () => {
    const members = await points('claim', CLAIM, PINNED)
    const drivers = await points('driver', DRIVER, DISCOVERED)
    const state = emptyTopicState('bot')
    topic(state, PINNED, 'Driver, add', members).configured = true
    topic(state, DISCOVERED, 'driver, add', drivers)
    const decision = recluster(state, [...members, ...drivers])
    expect(decision.events.map((e) => [e.type, e.payload.topicId])).toEqual([
      ['analysis.topic-relabeled', DISCOVERED],
    ])
    expect(state.topics.get(PINNED)!.label).toBe('Driver, add')
    const labels = activeLabels(state)
    expect(new Set(labels.map(labelKey)).size).toBe(labels.length)
  })
})
