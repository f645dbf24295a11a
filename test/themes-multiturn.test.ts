import { describe, expect, it } from 'vitest'
import { seededRandom } from '../bench/support/random.ts'
import { analysed, FIRST_CHATBOT, measure, place, recluster } from '../bench/topics-multiturn.ts'
import { hasTestModel, requireTestModel } from './support/model.ts'

// Themes on multi-turn traffic, with the real language model (issue 31, item 3): the signal sets' later
// conversations (fresh2 … fresh8: 420 multi-turn support conversations in many small domains; never the
// blind sets) analysed by the service's analyzer, placed, re-clustered and grouped into themes by the pure
// decisions, as `npm run bench:topics-multiturn` does. Regression: average linkage grouped 30 of their 32
// topics into one theme ("Book, order") holding every conversation, beside a pair of outliers.
requireTestModel()

describe.skipIf(!hasTestModel)('themes of a multi-turn chatbot, with the language model', () => {
  it('groups the topics into several themes, none holding most of them', async () => {
    const conversations = await analysed((set) => !FIRST_CHATBOT.has(set))
    expect(conversations).toHaveLength(420)
    const random = seededRandom(31)
    const order = [...conversations]
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    const placed = await place(order, 5)
    const after = measure(order, recluster(order, placed))
    expect(after.topics).toBeGreaterThanOrEqual(8)
    expect(after.themes).toBeGreaterThanOrEqual(3)
    // No theme holds half the topics, nor nearly every conversation.
    expect(after.largestThemeTopics).toBeLessThan(0.5)
    expect(after.largestThemeConversations).toBeLessThan(0.8)
    // Every topic in exactly one theme.
    const grouped = after.themeList.flatMap((t) => t.theme.topicIds)
    expect(new Set(grouped).size).toBe(grouped.length)
    expect(grouped).toHaveLength(after.topics)
  })
})
