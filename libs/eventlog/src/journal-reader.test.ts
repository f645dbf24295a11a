import { describe, expect, it } from 'vitest'
import { journalReadStatement, type ReadJournalOptions } from './journal-reader.ts'

/** Every shape of read: `after` a position or the group's lowest checkpoint, each other option or not. */
function shapes(values: { after: string; group: string; types: 'conversation' | 'chatbot'; max: number }) {
  const result: ReadJournalOptions[] = []
  for (const fromCheckpoints of [false, true])
    for (const typed of [false, true])
      for (const partitioned of [false, true])
        for (const limited of [false, true])
          result.push({
            after: fromCheckpoints
              ? { lowestCheckpointOf: { groupId: values.group, topic: '$journal', partitions: [0, 1] } }
              : values.after,
            limit: 500,
            ...(typed ? { streamTypes: [values.types] } : {}),
            ...(partitioned ? { partitions: { of: [1], count: 4 } } : {}),
            ...(limited ? { maxRecords: values.max } : {}),
          })
  return result
}

describe("the journal read's prepared statement", () => {
  it('has a name of its own for each shape of read, and the same name for the same shape whatever its values', () => {
    const one = shapes({ after: '0', group: 'projector', types: 'conversation', max: 10 })
    const other = shapes({ after: '812', group: 'analysis', types: 'chatbot', max: 3 })
    const named = one.map((opts) => journalReadStatement(opts))
    expect(new Set(named.map((s) => s.name)).size).toBe(16)
    expect(new Set(named.map((s) => s.text)).size).toBe(16)
    other.forEach((opts, i) => {
      const statement = journalReadStatement(opts)
      expect(statement.name).toBe(named[i]!.name)
      expect(statement.text).toBe(named[i]!.text)
    })
  })
})
