export { type ChatbotView, chatbotSchema, findChatbot, listChatbots } from './chatbot.ts'
export { isUuid } from './uuid.ts'
