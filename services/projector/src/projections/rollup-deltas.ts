import type { ActivityRow, LastActiveDelta } from './reach.ts'

/** A change to one hour's rollup row, added to what is there (negative to take back). */
export interface HourlyDelta {
  orgId: string
  chatbotId: string
  hour: string
  messages: number
  user: number
  assistant: number
  system: number
  tool: number
  /** End users' messages' sentiment. */
  sentimentSum: number
  sentimentCount: number
  positive: number
  neutral: number
  negative: number
  /** The assistant's messages' sentiment. */
  assistantSentimentSum: number
  assistantSentimentCount: number
  assistantPositive: number
  assistantNeutral: number
  assistantNegative: number
  /** Conversations and end users whose last active hour moves to (1) or away from (-1) this hour (reach.ts). */
  lastActiveConversations: number
  lastActiveUsers: number
}

/** A change to one topic's count in one hour (or day) of one chatbot. */
export interface TopicDelta {
  orgId: string
  chatbotId: string
  hour: string
  topic: string
  n: number
  sentimentSum: number
}

/** A change to the count of one chatbot's end-user messages of one detected language in one hour. */
export interface LanguageDelta {
  orgId: string
  chatbotId: string
  hour: string
  language: string
  n: number
}

export type Role = 'user' | 'assistant' | 'system' | 'tool'
export type SentimentLabel = 'positive' | 'neutral' | 'negative'

const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

/** The UTC hour a timestamp falls in, as an ISO string (YYYY-MM-DDTHH:00:00.000Z). */
export function hourOf(timestamp: string | Date): string {
  // Events carry UTC timestamps as toISOString() writes them: the hour is their first 13 characters,
  // without the cost of a Date (a message's hour is taken several times per event). The same hour as
  // Date gives for every timestamp the event schemas accept (they refuse hour 24, second 60 and days a
  // month does not have, which Date would roll over).
  if (typeof timestamp === 'string' && CANONICAL_UTC.test(timestamp))
    return `${timestamp.slice(0, 13)}:00:00.000Z`
  const d = new Date(timestamp)
  d.setUTCMinutes(0, 0, 0)
  return d.toISOString()
}

/** The UTC day a timestamp falls in, as an ISO string. */
export function dayOf(timestamp: string | Date): string {
  if (typeof timestamp === 'string' && CANONICAL_UTC.test(timestamp))
    return `${timestamp.slice(0, 10)}T00:00:00.000Z`
  const d = new Date(timestamp)
  d.setUTCHours(0, 0, 0, 0)
  return d.toISOString()
}

type Measure = Exclude<keyof HourlyDelta, 'orgId' | 'chatbotId' | 'hour'>
export const MEASURES: readonly Measure[] = [
  'messages',
  'user',
  'assistant',
  'system',
  'tool',
  'sentimentSum',
  'sentimentCount',
  'positive',
  'neutral',
  'negative',
  'assistantSentimentSum',
  'assistantSentimentCount',
  'assistantPositive',
  'assistantNeutral',
  'assistantNegative',
  'lastActiveConversations',
  'lastActiveUsers',
]

const ASSISTANT_LABEL = {
  positive: 'assistantPositive',
  neutral: 'assistantNeutral',
  negative: 'assistantNegative',
} as const

function emptyDelta(orgId: string, chatbotId: string, hour: string): HourlyDelta {
  return {
    orgId,
    chatbotId,
    hour,
    messages: 0,
    user: 0,
    assistant: 0,
    system: 0,
    tool: 0,
    sentimentSum: 0,
    sentimentCount: 0,
    positive: 0,
    neutral: 0,
    negative: 0,
    assistantSentimentSum: 0,
    assistantSentimentCount: 0,
    assistantPositive: 0,
    assistantNeutral: 0,
    assistantNegative: 0,
    lastActiveConversations: 0,
    lastActiveUsers: 0,
  }
}

/** What the rollup tables receive from a run of events, each row once, in the order rows are locked. */
export interface RollupWrites {
  /** Added to rm_hourly_stats, by (org, chatbot, hour). */
  readonly stats: HourlyDelta[]
  /** Added to rm_org_hourly_stats: the sums of the chatbots' rows, and the organization's own last active users. */
  readonly orgStats: HourlyDelta[]
  /** Added to rm_hourly_topics and rm_daily_topics (zero changes left out). */
  readonly hourlyTopics: TopicDelta[]
  readonly dailyTopics: TopicDelta[]
  /** Added to rm_hourly_languages (zero changes left out). */
  readonly hourlyLanguages: LanguageDelta[]
}

/**
 * The rollups' side of the fold: deltas accumulated per row in memory, with no I/O, so that a batch
 * writes each rollup row once (the chatbot's hourly rollups, the organization's, topics per hour and
 * per day) and each (chatbot, hour, conversation) activity row once (reach.ts links them).
 */
export class RollupDeltas {
  private readonly stats = new Map<string, HourlyDelta>()
  /** Organization-wide moves of last active end-user hours (chatbotId unused). */
  private readonly orgUsers = new Map<string, HourlyDelta>()
  private readonly topics = new Map<string, TopicDelta>()
  private readonly languages = new Map<string, LanguageDelta>()
  private readonly activity = new Map<string, ActivityRow>()

  private row(orgId: string, chatbotId: string, hour: string): HourlyDelta {
    const key = `${chatbotId}|${hour}`
    let row = this.stats.get(key)
    if (!row) {
      row = emptyDelta(orgId, chatbotId, hour)
      this.stats.set(key, row)
    }
    return row
  }

  /** Moves of last active hours (reach.ts), per chatbot or (chatbotId null) for the organization. */
  addLastActive(
    deltas: readonly LastActiveDelta[],
    field: 'lastActiveConversations' | 'lastActiveUsers',
  ): void {
    for (const d of deltas) {
      if (d.chatbotId !== null) {
        this.row(d.orgId, d.chatbotId, d.hour)[field] += d.delta
      } else {
        const key = `${d.orgId}|${d.hour}`
        const row = this.orgUsers.get(key) ?? emptyDelta(d.orgId, '', d.hour)
        row.lastActiveUsers += d.delta
        this.orgUsers.set(key, row)
      }
    }
  }

  /** Counts (sign 1) or takes back (sign -1) one message in its hour. */
  addMessage(orgId: string, chatbotId: string, hour: string, role: Role, sign: 1 | -1 = 1): void {
    const row = this.row(orgId, chatbotId, hour)
    row.messages += sign
    row[role] += sign
  }

  /**
   * Adds (sign 1) or takes back (sign -1) one message's sentiment and topics in its hour: an end user's
   * into the end users' figures and its topics (with their sentiment), an assistant's into the
   * assistant's; system and tool messages' results count nowhere (and no message but an end user's
   * has topics: older results' topics of other roles are left out).
   */
  addAnalysis(
    orgId: string,
    chatbotId: string,
    hour: string,
    role: Role,
    sentiment: { score: number; label: SentimentLabel },
    topics: readonly string[],
    sign: 1 | -1,
  ): void {
    if (role !== 'user' && role !== 'assistant') return
    const row = this.row(orgId, chatbotId, hour)
    if (role === 'assistant') {
      row.assistantSentimentSum += sign * sentiment.score
      row.assistantSentimentCount += sign
      row[ASSISTANT_LABEL[sentiment.label]] += sign
      return
    }
    row.sentimentSum += sign * sentiment.score
    row.sentimentCount += sign
    row[sentiment.label] += sign
    for (const topic of topics) {
      const key = `${chatbotId}|${hour}|${topic}`
      let entry = this.topics.get(key)
      if (!entry) {
        entry = { orgId, chatbotId, hour, topic, n: 0, sentimentSum: 0 }
        this.topics.set(key, entry)
      }
      entry.n += sign
      entry.sentimentSum += sign * sentiment.score
    }
  }

  /**
   * Counts (sign 1) or takes back (sign -1) one end-user message of a detected language in its hour
   * (rm_hourly_languages; the caller decides what counts: message-fold.ts countedLanguage).
   */
  addLanguage(orgId: string, chatbotId: string, hour: string, language: string, sign: 1 | -1): void {
    const key = `${chatbotId}|${hour}|${language}`
    let entry = this.languages.get(key)
    if (!entry) {
      entry = { orgId, chatbotId, hour, language, n: 0 }
      this.languages.set(key, entry)
    }
    entry.n += sign
  }

  /** The conversation was active in the hour, with this end user (null: none known). */
  addActivity(
    orgId: string,
    chatbotId: string,
    hour: string,
    conversationId: string,
    endUserId: string | null,
  ): void {
    const key = `${chatbotId}|${hour}|${conversationId}`
    // As the upsert does: a row keeps its end user when a later one comes without.
    endUserId ??= this.activity.get(key)?.endUserId ?? null
    this.activity.set(key, { orgId, chatbotId, hour, conversationId, endUserId })
  }

  /** The activity rows gathered, taken out (they are written, and linked, before the rollups). */
  takeActivity(): ActivityRow[] {
    const rows = [...this.activity.values()]
    this.activity.clear()
    return rows
  }

  /** The rollup rows gathered, taken out; activity must have been taken first (it moves last-active counts). */
  takeWrites(): RollupWrites {
    const stats = [...this.stats.values()].sort(byKey)
    const org = new Map<string, HourlyDelta>()
    for (const s of stats) {
      const key = `${s.orgId}|${s.hour}`
      let row = org.get(key)
      if (!row) {
        row = emptyDelta(s.orgId, '', s.hour)
        org.set(key, row)
      }
      // The organization's last active users are its own (an end user of two chatbots is one).
      for (const m of MEASURES) if (m !== 'lastActiveUsers') row[m] += s[m]
    }
    for (const [key, u] of this.orgUsers) {
      const row = org.get(key) ?? emptyDelta(u.orgId, '', u.hour)
      row.lastActiveUsers += u.lastActiveUsers
      org.set(key, row)
    }
    const hourlyTopics = [...this.topics.values()]
      .filter((t) => t.n !== 0 || t.sentimentSum !== 0)
      .sort(byTopicKey)
    const daily = new Map<string, TopicDelta>()
    for (const t of hourlyTopics) {
      const day = dayOf(t.hour)
      const key = `${t.chatbotId}|${day}|${t.topic}`
      const entry = daily.get(key) ?? { ...t, hour: day, n: 0, sentimentSum: 0 }
      entry.n += t.n
      entry.sentimentSum += t.sentimentSum
      daily.set(key, entry)
    }
    this.stats.clear()
    this.orgUsers.clear()
    const hourlyLanguages = [...this.languages.values()].filter((l) => l.n !== 0).sort(byLanguageKey)
    this.topics.clear()
    this.languages.clear()
    return {
      stats,
      orgStats: [...org.values()].sort(byKey),
      hourlyTopics,
      dailyTopics: [...daily.values()].filter((t) => t.n !== 0 || t.sentimentSum !== 0).sort(byTopicKey),
      hourlyLanguages,
    }
  }
}

// One order for the rows every batch upserts, so that two projector instances adding to the same rows
// lock them in the same order (never a deadlock). Code-unit order: the same in every process.
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const byKey = (a: HourlyDelta, b: HourlyDelta) =>
  compare(a.orgId, b.orgId) || compare(a.chatbotId, b.chatbotId) || compare(a.hour, b.hour)
const byTopicKey = (a: TopicDelta, b: TopicDelta) =>
  compare(a.chatbotId, b.chatbotId) || compare(a.hour, b.hour) || compare(a.topic, b.topic)
const byLanguageKey = (a: LanguageDelta, b: LanguageDelta) =>
  compare(a.chatbotId, b.chatbotId) || compare(a.hour, b.hour) || compare(a.language, b.language)
