import { useEffect, useRef, useState } from 'react'
import { topics } from '../api/endpoints.ts'
import { formatDateTime } from '../lib/format.ts'
import { describeTopicCommand, topicCommandActor, topicCommandStatus } from '../lib/topic-commands.ts'
import { usePolled } from '../lib/use-poll.ts'
import { ErrorAlert } from './alert.tsx'

/** How often the list is read while a command is pending, and for how long after the last one sent. */
const POLL_MS = 2_000
const POLL_FOR_MS = 120_000

/**
 * A chatbot's recent topic commands and what became of each (GET …/topics/commands): pending until the
 * analysis has handled it, then done, no change, refused with why, or failed. While one is pending the
 * list is read every 2 s, for at most 2 minutes after the page opened or the last command was sent
 * (`sentAt`); a command still pending then is said to be.
 */
export function RecentTopicChanges({ chatbotId, sentAt }: { chatbotId: string; sentAt: number }) {
  const pollUntil = useRef(Date.now() + POLL_FOR_MS)
  const [polling, setPolling] = useState(false)
  const list = usePolled(
    async (signal) => {
      const commands = await topics.commands(chatbotId, signal)
      setPolling(commands.some((c) => c.status === 'pending') && Date.now() < pollUntil.current)
      return commands
    },
    chatbotId,
    polling ? POLL_MS : undefined,
  )
  const { refresh } = list
  useEffect(() => {
    if (sentAt === 0) return
    pollUntil.current = sentAt + POLL_FOR_MS
    refresh()
  }, [sentAt, refresh])
  const commands = list.data ?? []
  if (commands.length === 0 && !list.error) return null
  return (
    <section aria-labelledby="recent-changes-heading" className="card">
      <h2 id="recent-changes-heading">Recent changes to the topics</h2>
      <p className="muted">
        Each change is applied by the analysis shortly after it is sent; one the topics no longer allow by
        then (re-clustering retired the topic, say) is refused.
        {!polling && commands.some((c) => c.status === 'pending')
          ? ' Some are still pending: this list updates when the page is opened again.'
          : ''}
      </p>
      <ErrorAlert error={list.error} />
      <ul className="topic-changes">
        {commands.map((c) => {
          const status = topicCommandStatus(c)
          const actor = topicCommandActor(c)
          return (
            <li key={c.id} className={`topic-change topic-change-${status.tone}`}>
              <span className="topic-change-what">{describeTopicCommand(c)}</span>{' '}
              <span className="muted">
                {actor ? `by ${actor}, ` : ''}
                <time dateTime={c.requestedAt}>{formatDateTime(c.requestedAt)}</time>
              </span>
              <p className="topic-change-status">{status.text}</p>
            </li>
          )
        })}
      </ul>
    </section>
  )
}
