import { useEffect, useState } from 'react'
import { conversations } from '../api/endpoints.ts'
import type { Chatbot } from '../api/types.ts'
import { curlExample, javascriptExample, KEY_PLACEHOLDER } from '../lib/capture-examples.ts'
import { formatDateTime } from '../lib/format.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { usePolled } from '../lib/use-poll.ts'
import { CodeBlock } from './code-block.tsx'

const WAIT_POLL_MS = 2_000
const LATEST_POLL_MS = 15_000

/**
 * How to send the first conversation, with the key while this tab still knows it, and a status that
 * polls until the chatbot's first message has arrived, then turns green.
 */
export function Onboarding({ chatbot }: { chatbot: Chatbot }) {
  const { freshKey } = useSession()
  const apiKey = freshKey(chatbot.id)
  const [received, setReceived] = useState(false)
  const first = usePolled(
    (signal) => conversations.list({ chatbotId: chatbot.id, limit: 1 }, signal),
    chatbot.id,
    received ? LATEST_POLL_MS : WAIT_POLL_MS,
  )
  const latest = first.data?.conversations[0]
  useEffect(() => setReceived(latest !== undefined), [latest])
  const origin = window.location.origin

  return (
    <section className="card" aria-labelledby="onboarding-heading">
      <h2 id="onboarding-heading">{latest ? 'Receiving conversations' : 'Send your first conversation'}</h2>
      <div role="status" aria-live="polite">
        {latest ? (
          <p className="status-line received">
            <span className="dot" aria-hidden="true" /> First message received. Latest conversation{' '}
            <Link to={paths.conversation(latest.id)}>{latest.conversationId}</Link>, last message{' '}
            {formatDateTime(latest.lastMessageAt)}.
          </p>
        ) : first.loading ? null : (
          <p className="status-line waiting">
            <span className="dot" aria-hidden="true" /> Waiting for the first message… this updates by itself
            as soon as one arrives.
          </p>
        )}
      </div>
      <details open={!latest}>
        <summary>Capture examples (curl and JavaScript)</summary>
        <p>
          Your chatbot's server sends each conversation's messages to <code>{origin}/api/v1/capture</code>{' '}
          with the chatbot's API key.{' '}
          {apiKey
            ? 'The examples below contain the key that was just shown.'
            : `Replace ${KEY_PLACEHOLDER} with the key you saved when you created the chatbot (lost it? rotate the key below).`}
        </p>
        <CodeBlock label="curl" code={curlExample(origin, apiKey)} />
        <CodeBlock label="JavaScript" code={javascriptExample(origin, apiKey)} />
        <p className="muted">
          Send the same <code>conversationId</code> again to add messages to a conversation; a message{' '}
          <code>id</code> is stored once. Sentiment and topics are added within seconds.
        </p>
      </details>
    </section>
  )
}
