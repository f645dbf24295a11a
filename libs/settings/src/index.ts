export {
  CUSTOM_FIELD_TYPES,
  type CustomFieldType,
  MAX_NAME_LENGTH,
  MAX_RETENTION_DAYS,
  MAX_SETTINGS_BYTES,
  MAX_SETTINGS_DEPTH,
  MAX_TOPIC_KEYWORDS,
  MIN_RETENTION_DAYS,
} from './limits.ts'
export {
  analysisEnabled,
  type ChatbotSettings,
  chatbotTopics,
  customFieldSchema,
  knownSettingsSchema,
  retentionDaysSql,
  settingsPatchSchema,
  settingsSchema,
} from './settings.ts'
