import type { AuditEntry } from '../api/types.ts'

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`

/** What an audit entry says was done, as the end of a sentence starting with who did it. */
export function describeAuditEntry(entry: AuditEntry): string {
  const name = entry.target.name ?? entry.target.id
  const d = entry.details
  switch (entry.action) {
    case 'organization.created':
      return `created the organization ${name}`
    case 'organization.member-invited':
      return `invited ${name} as ${String(d.role)}`
    case 'organization.invitation-revoked':
      return `revoked the invitation of ${name}`
    case 'organization.member-joined':
      return d.invitationId === null
        ? `joined as ${String(d.role)}, founding it`
        : `joined as ${String(d.role)}`
    case 'organization.member-role-changed':
      return `changed the role of ${name} from ${String(d.previousRole)} to ${String(d.role)}`
    case 'organization.member-removed':
      return d.reason === 'left' ? `left (was ${String(d.role)})` : `removed ${name} (${String(d.role)})`
    case 'chatbot.created':
      return `created the chatbot ${name}`
    case 'chatbot.renamed':
      return `renamed the chatbot ${String(d.previousName ?? '')} to ${name}`.replace('  ', ' ')
    case 'chatbot.settings-changed': {
      const keys = Object.keys((d.patch as Record<string, unknown> | undefined) ?? {})
      return `changed the settings of ${name}${keys.length ? ` (${keys.join(', ')})` : ''}`
    }
    case 'chatbot.key-rotated':
      return `rotated the API key of ${name} (now ${String(d.apiKeyPrefix)})`
    case 'chatbot.deleted':
      return `deleted the chatbot ${name}`
    case 'chatbot.topic-rename-requested':
      // previousLabel: the topic's label then (renames recorded before it have none).
      // No label: the chatbot was deleted, and its topic labels with it.
      if (typeof d.label !== 'string') return `renamed a topic of ${name}`
      return typeof d.previousLabel === 'string'
        ? `renamed the topic '${d.previousLabel}' of ${name} to '${d.label}'`
        : `renamed a topic of ${name} to ${d.label}`
    case 'chatbot.topic-hide-requested':
      return `hid a topic of ${name}`
    case 'chatbot.topic-unhide-requested':
      return `showed a hidden topic of ${name} again`
    case 'chatbot.topic-merge-requested':
      return `merged two topics of ${name}`
    case 'chatbot.topic-creation-requested':
      return typeof d.label === 'string'
        ? `created the topic ${d.label} of ${name} from examples`
        : `created a topic of ${name} from examples`
    case 'chatbot.reanalysis-requested':
      return `started a re-analysis of ${name}`
    case 'conversation.erased':
      return `erased an end user's data from ${name} (${plural(Number(d.conversationsErased ?? 0), 'conversation')})`
    default:
      return entry.action
  }
}

/** Who did it: their name, or their email, or that it was done automatically. */
export function auditActor(entry: AuditEntry): string {
  return entry.actor?.name || entry.actor?.email || 'The service'
}
