export { BODY_LIMIT, createHttpApp, type HttpAppOptions } from './create-app.ts'
export { installErrorHandler } from './error-handler.ts'
export {
  AppError,
  ERROR_STATUS,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetail,
  errorBody,
} from './errors.ts'
export { type ReadinessCheck, registerHealthRoutes } from './health.ts'
export { errorBodySchema, errorResponses, isoDateTimeSchema } from './schemas.ts'
