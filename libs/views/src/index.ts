export { type ChatbotRow, type ChatbotView, chatbotSchema, chatbotView } from './chatbot.ts'
export { isUuid } from './uuid.ts'
