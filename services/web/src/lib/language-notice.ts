/** The overview's languages (GET /api/v1/analytics/overview). */
export interface LanguageFigures {
  readonly detected: number
  readonly notEnglish: number
  readonly notEnglishShare: number | null
  readonly mainOther: { readonly language: string; readonly messages: number } | null
}

/**
 * When the notice shows (a display choice, not an analysis constant): a fifth or more of the range's
 * end-user messages with a detected language are not English, counted over 20 such messages at least.
 * The detector called at most 3.3 % of English chatbots' messages another language (CLINC150, DSTC11,
 * trial6's English; docs/analysis.md "Languages"), so a fifth is no English chatbot's noise, and it is
 * already enough of the figures for a lead to distrust; under 20 messages one or two would decide it.
 */
export const NOTICE_SHARE = 0.2
export const NOTICE_MIN_DETECTED = 20

/** Whether to tell the lead that the figures read messages the analysis does not understand. */
export function showsLanguageNotice(languages: LanguageFigures | undefined): languages is LanguageFigures {
  return (
    languages !== undefined &&
    languages.notEnglishShare !== null &&
    languages.detected >= NOTICE_MIN_DETECTED &&
    languages.notEnglishShare >= NOTICE_SHARE
  )
}
