export { type ChatbotRow, type ChatbotView, chatbotSchema, chatbotView } from './chatbot.ts'
export { PREVIEW_CHARS, previewOf } from './preview.ts'
export { isUuid } from './uuid.ts'
