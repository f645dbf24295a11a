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
 * The statement of readLanguages: the range's counts per language from the hourly rollup the projector
 * keeps (rm_hourly_languages, migrations/0061), by the chatbot's key ($4) or the organization's index
 * ($4 null): about hours × languages rows, whatever the range's messages. The range is whole UTC hours
 * (analytics/range.ts), so the hours in it hold exactly the end-user messages sent in it. Exported for the
 * plan's test.
 */
export const LANGUAGES_SQL = `SELECT language, sum(messages)::float8 AS messages
       FROM rm_hourly_languages
      WHERE org_id = $1 AND hour >= $2 AND hour < $3 AND ($4::uuid IS NULL OR chatbot_id = $4)
      GROUP BY language
      ORDER BY messages DESC, language`

/**
 * The detected languages of the range's analysed end-user messages (not "und", not analysed before
 * detection), of one chatbot or of the organization's.
 */
export async function readLanguages(client: pg.ClientBase, scope: RollupScope): Promise<LanguageFigures> {
  const { rows } = await client.query<{ language: string; messages: number }>(LANGUAGES_SQL, [
    scope.orgId,
    scope.from,
    scope.to,
    scope.chatbotId ?? null,
  ])
  return languageFigures(rows)
}

/** The figures of the range's counts per language, most messages first (ties by language). */
export function languageFigures(
  rows: readonly { readonly language: string; readonly messages: number }[],
): LanguageFigures {
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
