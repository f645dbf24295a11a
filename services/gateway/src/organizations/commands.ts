import { appendToStream, lockStreamForUpdate } from '@cas/eventlog'
import { NO_CHATBOT_ID, type OrganizationEvent, parseRecordedEvent } from '@cas/events'
import { AppError } from '@cas/http'
import type pg from 'pg'
import { auditEntriesOf } from '../audit/entries.ts'
import { recordAudit } from '../audit/record.ts'
import {
  decide,
  evolve,
  type OrganizationCommand,
  type OrganizationState,
  type Refusal,
} from './organization.ts'
import { loadOrganizationForUpdate, type ProjectionExtras, projectOrganizationEvent } from './store.ts'

export interface OrganizationCommandResult {
  readonly state: OrganizationState
  readonly events: readonly OrganizationEvent[]
}

/**
 * Runs one command on an organization inside the caller's transaction: lock and load its state, decide,
 * append the events to its stream, apply them to the tables and write their audit entries. Everything
 * commits or rolls back with the caller's other changes (a sign-up's new user, say).
 */
export async function runOrganizationCommand(
  client: pg.ClientBase,
  orgId: string,
  command: OrganizationCommand,
  opts: {
    readonly now: () => Date
    /** Tracing metadata (the request's ids and actorId) for the events. */
    readonly trace?: Readonly<Record<string, string>>
    readonly extras?: ProjectionExtras
  },
): Promise<OrganizationCommandResult> {
  const state = await loadOrganizationForUpdate(client, orgId)
  const decision = decide(command, state, opts.now())
  if (!decision.ok) throw refusal(decision.reason)
  if (decision.events.length === 0) return { state, events: [] }
  const version = await lockStreamForUpdate(client, 'organization', orgId)
  const appended = await appendToStream(
    client,
    {
      streamType: 'organization',
      streamId: orgId,
      orgId,
      chatbotId: NO_CHATBOT_ID,
      // The organization's row lock (taken above) serializes its commands; the stream lock agrees.
      expectedVersion: version,
      events: decision.events,
      metadata: opts.trace,
    },
    { now: opts.now },
  )
  const events = appended.records.map((r) => parseRecordedEvent(r) as OrganizationEvent)
  for (const event of events) await projectOrganizationEvent(client, event, opts.extras)
  await recordAudit(client, auditEntriesOf(events))
  return { state: events.reduce(evolve, state), events }
}

/** The HTTP error for each refusal (API.md codes). */
export function refusal(reason: Refusal): AppError {
  switch (reason) {
    case 'not_found':
      return new AppError('not_found', 'No such member, invitation or organization.')
    case 'not_a_member':
      return new AppError('forbidden', 'You are no longer a member of this organization.')
    case 'owners_only':
      return new AppError('forbidden', 'Only an owner may give the owner role, or change or remove an owner.')
    case 'already_exists':
      return new AppError('conflict', 'This organization already exists.')
    case 'already_member':
      return new AppError('conflict', 'This person is already a member of the organization.')
    case 'already_invited':
      return new AppError(
        'conflict',
        'This email already has a pending invitation; revoke it first to send a new one.',
      )
    case 'invitation_expired':
      return new AppError('not_found', 'This invitation has expired; ask for a new one.')
    case 'wrong_person':
      return new AppError(
        'forbidden',
        'This invitation is for another email address: sign in as the person it was sent to.',
      )
    case 'last_owner':
      return new AppError(
        'conflict',
        'An organization needs an owner: make someone else an owner first, or delete the organization.',
      )
    default: {
      const unhandled: never = reason
      throw new Error(`unhandled refusal ${String(unhandled)}`)
    }
  }
}
