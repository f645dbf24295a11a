/**
 * Whether a topic's label names what its members ask for: the label shares a word stem with the name of the
 * topic's majority intent ("GetQuote" → get, quote; "card_declined" → card, declined), both sides stemmed
 * by winkNLP's Porter stemmer (v2) and stop words left out. A coarse check (a synonym does not count), but
 * one that no label fitted to the intent names could pass by chance.
 */
import model from 'wink-eng-lite-web-model'
import winkNLP, { type ItsFunction } from 'wink-nlp'

/** "GetQuote", "card_declined", "what_is_your_name" → the words of the name, lower case. */
export function intentWords(intent: string): string[] {
  return intent
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase())
}

export interface LabelAgreement {
  /** Share of the topics whose label shares a stem with their majority intent's name. */
  readonly share: number
  readonly agreeing: number
  readonly topics: number
  /** The topics that do not, with their majority intent, for the report. */
  readonly disagreeing: readonly { label: string; intent: string }[]
}

export function createLabelAgreement(): (
  topics: readonly { label: string; memberIntents: readonly string[] }[],
) => LabelAgreement {
  const nlp = winkNLP(model)
  const its = nlp.its
  const stems = (text: string): Set<string> => {
    const tokens = nlp.readDoc(text.toLowerCase()).tokens()
    const stem = tokens.out(its.stem as unknown as ItsFunction<string>) as string[]
    const type = tokens.out(its.type) as string[]
    const stop = tokens.out(its.stopWordFlag) as boolean[]
    return new Set(stem.filter((_, i) => type[i] === 'word' && !stop[i]))
  }
  return (topics) => {
    const disagreeing: { label: string; intent: string }[] = []
    for (const { label, memberIntents } of topics) {
      const counts = new Map<string, number>()
      for (const intent of memberIntents) counts.set(intent, (counts.get(intent) ?? 0) + 1)
      const majority = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a))[0]
      const labelStems = stems(label)
      if (![...stems(intentWords(majority).join(' '))].some((s) => labelStems.has(s))) {
        disagreeing.push({ label, intent: majority })
      }
    }
    const agreeing = topics.length - disagreeing.length
    return {
      share: topics.length === 0 ? 0 : agreeing / topics.length,
      agreeing,
      topics: topics.length,
      disagreeing,
    }
  }
}
