import { chatbots } from '../api/endpoints.ts'
import type { Chatbot } from '../api/types.ts'
import { useSession } from './session.tsx'
import { type Polled, usePolled } from './use-poll.ts'

/**
 * The organization's chatbots, for naming them in filters and lists; null for a role that may not read
 * chatbots (viewers), which then never asks (the server would refuse).
 */
export function useChatbotList(): Polled<Chatbot[]> & { readonly allowed: boolean } {
  const { can, account } = useSession()
  const allowed = can('chatbots:read')
  const polled = usePolled(
    (signal) => (allowed ? chatbots.list(signal) : Promise.resolve([])),
    `${account?.organization?.id}|${allowed}`,
  )
  return { ...polled, allowed }
}
