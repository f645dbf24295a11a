import type pg from 'pg'
import type { RollupScope } from './analytics.ts'

/** The language the local analyzer reads (docs/analysis.md, "Languages"). */
const ENGLISH = 'en'

export interface LanguageFigures {
  /** End-user messages in range whose language was detected (not "und", not analysed before detection). */
  readonly detected: number
  readonly notEnglish: number
  /** notEnglish / detected, 4 decimals; null when none was detected. */
  readonly notEnglishShare: number | null
  /** The language other than English of most of those messages; null when none. */
  readonly mainOther: { readonly language: string; readonly messages: number } | null
}

/**
 * The detected languages of the range's analysed end-user messages, of one chatbot or of the
 * organization's: read from rm_messages through its end-user messages' index (chatbot, sent_at), not
 * from a rollup, so the cost grows with the range's end-user messages (migrations/0059).
 */
export async function readLanguages(client: pg.ClientBase, scope: RollupScope): Promise<LanguageFigures> {
  const chatbots =
    scope.chatbotId === undefined
      ? 'SELECT c.id FROM rm_chatbots c WHERE c.org_id = $1'
      : 'SELECT $4::uuid WHERE $1::uuid IS NOT NULL'
  const { rows } = await client.query<{ language: string; messages: number }>(
    `SELECT m.language, count(*)::float8 AS messages
       FROM (${chatbots}) b(id)
       JOIN rm_messages m ON m.chatbot_id = b.id AND m.role = 'user'
        AND m.sent_at >= $2 AND m.sent_at < $3 AND m.language IS NOT NULL AND m.language <> 'und'
      GROUP BY m.language
      ORDER BY messages DESC, m.language`,
    scope.chatbotId === undefined
      ? [scope.orgId, scope.from, scope.to]
      : [scope.orgId, scope.from, scope.to, scope.chatbotId],
  )
  const detected = rows.reduce((sum, r) => sum + r.messages, 0)
  const others = rows.filter((r) => r.language !== ENGLISH)
  const notEnglish = others.reduce((sum, r) => sum + r.messages, 0)
  const main = others[0]
  return {
    detected,
    notEnglish,
    notEnglishShare: detected === 0 ? null : Math.round((notEnglish / detected) * 10_000) / 10_000,
    mainOther: main ? { language: main.language, messages: main.messages } : null,
  }
}
