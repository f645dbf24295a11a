/** busy-day.ts's state file (the session, the chatbot and the burst's ledger) and its reads of the API. */
import { readFileSync } from 'node:fs'

export type Message = { id: string; role: 'user' | 'assistant'; content: string; sentAt: string }
export type Capture = { conversationId: string; messages: Message[]; user?: { id: string } }
export type State = {
  baseUrl: string
  cookie: string
  apiKey: string
  chatbotId: string
  ledger?: Ledger
}
export type Ledger = {
  accepted: Record<string, string[]> // conversationId → message ids acknowledged by a 2xx
  internalIds: Record<string, string[]> // conversationId → the internal ids its 2xx answers gave
  messagesStored: number
  statuses: Record<string, number> // "<kind> <status>" → count
  badConversationIds: string[]
  reversed: string[] // conversations whose timestamps were sent out of order
  networkRetries: number
  networkErrors: Record<string, number> // "<kind>: <cause>" → count
  wrongShapes: { kind: string; status: number; body: string }[]
  startedAt: string
  finishedAt: string
}

export async function readState(file: string): Promise<State> {
  return JSON.parse(readFileSync(file, 'utf8')) as State
}

export async function api<T>(state: State, url: string): Promise<T> {
  const response = await fetch(`${state.baseUrl}${url}`, { headers: { cookie: state.cookie } })
  if (!response.ok) throw new Error(`${url} ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
