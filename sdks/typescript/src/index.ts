export { ConversationAnalytics, type ConversationAnalyticsOptions, warningKind } from './client.js'
export type { components, paths } from './openapi.gen.js'
export {
  CaptureError,
  type CaptureErrorKind,
  type CaptureInput,
  type CaptureMessage,
  type CaptureRequestBody,
  type CaptureRequestMessage,
  type CaptureResponseBody,
  type CaptureStats,
  type CaptureWarning,
  type CaptureWarningKind,
  type ErrorResponseBody,
} from './types.js'
