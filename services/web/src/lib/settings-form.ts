import {
  analysisEnabled,
  CUSTOM_FIELD_TYPES,
  MAX_NAME_LENGTH,
  MAX_RETENTION_DAYS,
  MAX_TOPIC_KEYWORDS,
  MIN_RETENTION_DAYS,
} from '@cas/settings/limits'
import type { ChatbotSettings, CustomFieldType } from '../api/types.ts'

/** The settings form's state: the keys the service reads, as people edit them. */
export interface SettingsForm {
  readonly analysisEnabled: boolean
  /** Whole days as typed; '' keeps conversations forever. */
  readonly retentionDays: string
  readonly customFields: readonly { readonly name: string; readonly type: CustomFieldType }[]
  /** Keywords as typed: comma-separated. */
  readonly topics: readonly { readonly label: string; readonly keywords: string }[]
}

export { CUSTOM_FIELD_TYPES, MAX_RETENTION_DAYS }

export function settingsToForm(settings: ChatbotSettings): SettingsForm {
  return {
    analysisEnabled: analysisEnabled(settings),
    retentionDays: settings.retentionDays === undefined ? '' : String(settings.retentionDays),
    customFields: Object.entries(settings.customFields ?? {}).map(([name, type]) => ({ name, type })),
    topics: Object.entries(settings.topics ?? {}).map(([label, keywords]) => ({
      label,
      keywords: keywords.join(', '),
    })),
  }
}

export function splitKeywords(text: string): string[] {
  const seen = new Set<string>()
  for (const part of text.split(',')) {
    const keyword = part.trim()
    if (keyword) seen.add(keyword)
  }
  return [...seen]
}

/** Every problem that would make the server refuse the form, in words, or an empty list. */
export function settingsProblems(form: SettingsForm): string[] {
  const problems: string[] = []
  const retention = form.retentionDays.trim()
  if (retention !== '') {
    const days = Number(retention)
    if (!Number.isInteger(days) || days < MIN_RETENTION_DAYS || days > MAX_RETENTION_DAYS) {
      problems.push(
        `Retention must be a whole number of days from ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}, or empty.`,
      )
    }
  }
  const names = form.customFields.map((f) => f.name.trim())
  if (names.some((n) => n === '')) problems.push('Every custom field needs a name.')
  if (names.some((n) => n.length > MAX_NAME_LENGTH))
    problems.push(`Custom field names are at most ${MAX_NAME_LENGTH} characters.`)
  for (const dup of duplicates(names.filter(Boolean)))
    problems.push(`The custom field "${dup}" is listed twice.`)
  const labels = form.topics.map((t) => t.label.trim())
  if (labels.some((l) => l === '')) problems.push('Every topic needs a label.')
  if (labels.some((l) => l.length > MAX_NAME_LENGTH))
    problems.push(`Topic labels are at most ${MAX_NAME_LENGTH} characters.`)
  for (const dup of duplicates(labels.filter(Boolean))) problems.push(`The topic "${dup}" is listed twice.`)
  for (const topic of form.topics) {
    const keywords = splitKeywords(topic.keywords)
    if (keywords.length === 0 && topic.label.trim()) {
      problems.push(`The topic "${topic.label.trim()}" needs at least one keyword.`)
    }
    if (keywords.length > MAX_TOPIC_KEYWORDS)
      problems.push(`The topic "${topic.label.trim()}" has more than ${MAX_TOPIC_KEYWORDS} keywords.`)
    if (keywords.some((k) => k.length > MAX_NAME_LENGTH))
      problems.push(`Keywords are at most ${MAX_NAME_LENGTH} characters.`)
  }
  return problems
}

function duplicates(values: string[]): string[] {
  return [...new Set(values.filter((v, i) => values.indexOf(v) !== i))]
}

/**
 * The JSON Merge Patch (RFC 7386, what PATCH /chatbots/:id takes) from the stored settings to the form:
 * changed keys only, null for removed ones; undefined when nothing changed. Keys the form does not edit
 * are left alone.
 */
export function settingsPatch(
  current: ChatbotSettings,
  form: SettingsForm,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {}

  if (form.analysisEnabled !== analysisEnabled(current)) patch.analysisEnabled = form.analysisEnabled

  const retention = form.retentionDays.trim() === '' ? undefined : Number(form.retentionDays)
  if (retention !== current.retentionDays) patch.retentionDays = retention ?? null

  const fields = Object.fromEntries(form.customFields.map((f) => [f.name.trim(), f.type]))
  const fieldsPatch = recordPatch(current.customFields ?? {}, fields, (a, b) => a === b)
  if (fieldsPatch) patch.customFields = fieldsPatch

  const topics = Object.fromEntries(form.topics.map((t) => [t.label.trim(), splitKeywords(t.keywords)]))
  const topicsPatch = recordPatch(current.topics ?? {}, topics, sameList)
  if (topicsPatch) patch.topics = topicsPatch

  return Object.keys(patch).length > 0 ? patch : undefined
}

/** The merge patch of one record: its new and changed entries, null for each removed one. */
function recordPatch<T>(
  before: Readonly<Record<string, T>>,
  after: Readonly<Record<string, T>>,
  same: (a: T, b: T) => boolean,
): Record<string, T | null> | undefined {
  const patch: Record<string, T | null> = {}
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null
  for (const [key, value] of Object.entries(after)) {
    const old = before[key]
    if (old === undefined || !same(old, value)) patch[key] = value
  }
  return Object.keys(patch).length > 0 ? patch : undefined
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}
