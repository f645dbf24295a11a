export { decompressRequestBody } from './content-encoding.ts'
export {
  BODY_LIMIT,
  createHttpApp,
  createProcessMetrics,
  type HttpAppOptions,
  requestIdOf,
} from './create-app.ts'
export { DATABASE_RETRY_AFTER_SECONDS, installErrorHandler } from './error-handler.ts'
export {
  AppError,
  ERROR_STATUS,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetail,
  errorBody,
  UnavailableError,
  type UnavailableReason,
} from './errors.ts'
export { type ReadinessCheck, registerHealthRoutes } from './health.ts'
export { type JsonPath, jsonPointer, MAX_BODY_DEPTH, pathDeeperThan } from './json-depth.ts'
export { installLoadShedding, type LoadSheddingOptions, type PoolUsage } from './load-shedding.ts'
export {
  documented,
  ERROR_RESPONSES,
  finishOpenApiDocument,
  RESPONSE_HEADERS,
  type ResponseDoc,
  type ResponseHeader,
  rateLimitHeaders,
} from './openapi.ts'
export { errorBodySchema, errorResponses, isoDateTimeSchema } from './schemas.ts'
export { findIllFormedText } from './text-check.ts'
export { type EventTrace, eventTrace } from './trace.ts'
