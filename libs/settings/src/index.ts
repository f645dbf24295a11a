// Everything the service knows of chatbot settings: the schema (settings.ts) and its bounds (limits.ts).
export * from './limits.ts'
export * from './settings.ts'
