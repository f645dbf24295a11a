import { useEffect, useState } from 'react'
import { chatbots } from '../api/endpoints.ts'
import type { Chatbot, Conversation } from '../api/types.ts'
import {
  curlExample,
  javascriptExample,
  KEY_PLACEHOLDER,
  opentelemetryExample,
  pythonSdkExample,
  typescriptSdkExample,
} from '../lib/capture-examples.ts'
import { formatDateTime, plural } from '../lib/format.ts'
import { onboardingStage } from '../lib/onboarding.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { ErrorAlert } from './alert.tsx'
import { CodeBlock } from './code-block.tsx'

/** The examples' fold: its label, which the browser tests click. */
const CAPTURE_EXAMPLES = 'Capture examples (curl, JavaScript, SDKs, OpenTelemetry)'

interface OnboardingProps {
  readonly chatbot: Chatbot
  /** The chatbot's newest conversation, once there is one. */
  readonly latest: Conversation | undefined
  /** True until it is known whether there is one. */
  readonly loading: boolean
  /** Called after the page sent a test conversation, to look for it at once. */
  readonly onSent: () => void
}

/**
 * How to send the first conversation (with the key while this tab still knows it) and a "Send a test
 * conversation" button that needs no key (the server sends it with the chatbot's), so it is there after
 * a reload too; a status that waits for the chatbot's first message (the page polls for it), turns green
 * for whoever watched it wait, and otherwise says when the last message came.
 */
export function Onboarding({ chatbot, latest, loading, onSent }: OnboardingProps) {
  const { freshKey, can } = useSession()
  const apiKey = freshKey(chatbot.id)
  const origin = window.location.origin
  const [waitedHere, setWaitedHere] = useState(false)
  useEffect(() => {
    if (!loading && !latest) setWaitedHere(true)
  }, [loading, latest])
  const stage = onboardingStage({ loading, hasConversation: latest !== undefined, waitedHere })

  return (
    <section className="card" aria-labelledby="onboarding-heading">
      <h2 id="onboarding-heading">{latest ? 'Receiving conversations' : 'Send your first conversation'}</h2>
      <div role="status" aria-live="polite">
        {latest && stage === 'first-message' ? (
          <p className="status-line received">
            <span className="dot" aria-hidden="true" /> First message received. Latest conversation{' '}
            <Link to={paths.conversation(latest.id)}>{latest.conversationId}</Link>, last message{' '}
            {formatDateTime(latest.lastMessageAt)}.
          </p>
        ) : latest ? (
          <p className="status-line received">
            <span className="dot" aria-hidden="true" /> Last message{' '}
            <time dateTime={latest.lastMessageAt}>{formatDateTime(latest.lastMessageAt)}</time>, in
            conversation <Link to={paths.conversation(latest.id)}>{latest.conversationId}</Link>.
          </p>
        ) : stage === 'waiting' ? (
          <p className="status-line waiting">
            <span className="dot" aria-hidden="true" /> Waiting for the first message… this updates by itself
            as soon as one arrives.
          </p>
        ) : null}
      </div>
      <details open={!latest}>
        <summary>{CAPTURE_EXAMPLES}</summary>
        {can('chatbots:edit') ? <SendTestConversation chatbotId={chatbot.id} onSent={onSent} /> : null}
        <p>
          Your chatbot's server sends each conversation's messages to <code>{origin}/api/v1/capture</code>{' '}
          with the chatbot's API key.{' '}
          {apiKey
            ? 'The examples below contain the key that was just shown.'
            : `Replace ${KEY_PLACEHOLDER} with the key you saved when you created the chatbot (lost it? rotate the key below).`}
        </p>
        <CodeBlock label="curl" code={curlExample(origin, apiKey)} />
        <CodeBlock label="JavaScript" code={javascriptExample(origin, apiKey)} />
        <p>
          Or let an SDK batch, compress and retry for you, in the background (<code>sdks/typescript</code> and{' '}
          <code>sdks/python</code> in the repository):
        </p>
        <CodeBlock label="TypeScript SDK" code={typescriptSdkExample(origin, apiKey)} />
        <CodeBlock label="Python SDK" code={pythonSdkExample(origin, apiKey)} />
        <p>
          Already using OpenTelemetry? Export your traces to <code>{origin}/v1/traces</code>: the GenAI spans
          (OpenAI, Vercel AI SDK and other instrumentations) become conversations, other spans are ignored.
        </p>
        <CodeBlock label="OpenTelemetry" code={opentelemetryExample(origin, apiKey)} />
        <p className="muted">
          Send the same <code>conversationId</code> again to add messages to a conversation; a message{' '}
          <code>id</code> is stored once. Sentiment and topics are added within seconds.
        </p>
      </details>
    </section>
  )
}

/** Sends the example conversation from here: the server captures it with the chatbot's key. */
function SendTestConversation({ chatbotId, onSent }: { chatbotId: string; onSent: () => void }) {
  const [state, setState] = useState<{ busy: boolean; result?: string; error?: unknown }>({ busy: false })
  const send = async () => {
    setState({ busy: true })
    try {
      const sent = await chatbots.sendTestConversation(chatbotId)
      const stored =
        sent.messagesStored === 0
          ? 'It was already sent: nothing new was stored.'
          : `Sent: ${plural(sent.messagesStored, 'message')} stored${sent.analysisQueued ? ', analysis queued' : ''}.`
      setState({ busy: false, result: stored })
      onSent()
    } catch (error) {
      setState({ busy: false, error })
    }
  }
  return (
    <div className="actions test-send">
      <button type="button" className="button primary" onClick={send} disabled={state.busy}>
        {state.busy ? 'Sending…' : 'Send a test conversation'}
      </button>
      <span className="muted">Sends the example below from this page, with this chatbot's key.</span>
      <p role="status" className="success-text">
        {state.result ?? ''}
      </p>
      <ErrorAlert error={state.error} prefix="The test conversation was not sent." />
    </div>
  )
}
