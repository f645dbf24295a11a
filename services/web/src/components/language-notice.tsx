import { formatNumber } from '../lib/format.ts'
import { type LanguageFigures, showsLanguageNotice } from '../lib/language-notice.ts'

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' })

/** "Spanish" for "es"; the code itself where the browser has no name for it. */
function languageName(code: string): string {
  try {
    return languageNames.of(code) ?? code
  } catch {
    return code
  }
}

/** Says that the figures read messages the analysis does not understand, when many (lib/language-notice.ts). */
export function LanguageNotice({
  languages,
  scope,
}: {
  languages: LanguageFigures | undefined
  scope: 'this chatbot' | 'these chatbots'
}) {
  if (!showsLanguageNotice(languages)) return null
  const percent = Math.round((languages.notEnglishShare ?? 0) * 100)
  const main = languages.mainOther ? languageName(languages.mainOther.language) : 'another language'
  return (
    <div className="alert warning" role="note" aria-label="Language notice">
      <p>
        {percent} % of the end users' messages of {scope} in this range are not in English (mostly {main}:{' '}
        {formatNumber(languages.mainOther?.messages ?? 0)} of {formatNumber(languages.detected)}). The
        analysis reads English only: their sentiment, topics and signals are unreliable. See "Languages:
        English" in docs/analysis.md of the service's documentation.
      </p>
    </div>
  )
}
