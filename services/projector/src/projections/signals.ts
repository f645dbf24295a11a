import { analyzerId, type RecordedEvent } from '@cas/events'
import type pg from 'pg'

type SignalsDetected = RecordedEvent<'analysis.signals-detected'>
type MessagesAnalyzed = RecordedEvent<'analysis.messages-analyzed'>

/**
 * rm_conversation_signals: each conversation's signals as its last analysis.signals-detected gave them
 * (each event replaces the conversation's earlier signals). Events of one conversation come in stream
 * order, so the last of a batch is the one to keep. `refined_by` is the signal's `refinedBy` (the LLM that
 * confirmed it, `llm:<model>`), null when the local model alone decided it.
 * rm_signals_decided: when each conversation's signals were last decided, with the settings of then (what
 * makes it checked for a signal, issue 32). The analysis decides them again in the transaction of each
 * analysis of the conversation's messages, announcing them only when they change, so the time is the
 * latest `occurredAt` of its analysis.messages-analyzed that decided them and analysis.signals-detected;
 * kept as the greatest, so a batch delivered again changes nothing. A re-placement in a topic (a new
 * topic took earlier messages, a re-clustering, a topic created from examples) sends
 * analysis.messages-analyzed with `signalsDecided: false` and counts for nothing here; v2 events
 * (`signalsDecided` null, recorded before it was said) count as deciding, as they always did.
 */
export class SignalChanges {
  private readonly latest = new Map<string, SignalsDetected>()
  private readonly decided = new Map<string, SignalsDetected | MessagesAnalyzed>()

  add(event: SignalsDetected | MessagesAnalyzed): void {
    if (event.type === 'analysis.signals-detected') this.latest.set(event.streamId, event)
    else if (event.payload.signalsDecided === false) return
    const before = this.decided.get(event.streamId)
    if (!before || Date.parse(before.occurredAt) < Date.parse(event.occurredAt))
      this.decided.set(event.streamId, event)
  }

  async flush(client: pg.ClientBase): Promise<void> {
    await this.flushDecided(client)
    if (this.latest.size === 0) return
    const events = [...this.latest.values()]
    this.latest.clear()
    await client.query({
      name: 'cas-projector-signals-delete',
      text: 'DELETE FROM rm_conversation_signals WHERE conversation_id = ANY($1::uuid[])',
      values: [events.map((e) => e.streamId)],
    })
    const rows = events.flatMap((e) =>
      e.payload.signals.map((s) => ({
        e,
        s,
        analyzer: analyzerId(e.payload.analyzer),
      })),
    )
    if (rows.length === 0) return
    await client.query({
      name: 'cas-projector-signals-insert',
      text: `INSERT INTO rm_conversation_signals (org_id, chatbot_id, conversation_id, signal, label, confidence, evidence, analyzer,
         refined_by)
       SELECT r.org_id, r.chatbot_id, r.conversation_id, r.signal, r.label, r.confidence,
              ARRAY(SELECT jsonb_array_elements_text(r.evidence)), r.analyzer, r.refined_by
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::real[], $7::jsonb[], $8::text[],
                     $9::text[])
              AS r(org_id, chatbot_id, conversation_id, signal, label, confidence, evidence, analyzer, refined_by)`,
      values: [
        rows.map((r) => r.e.orgId),
        rows.map((r) => r.e.chatbotId),
        rows.map((r) => r.e.streamId),
        rows.map((r) => r.s.name),
        rows.map((r) => r.s.label ?? null),
        rows.map((r) => r.s.confidence),
        rows.map((r) => JSON.stringify(r.s.evidence)),
        rows.map((r) => r.analyzer),
        rows.map((r) => r.s.refinedBy ?? null),
      ],
    })
  }

  private async flushDecided(client: pg.ClientBase): Promise<void> {
    if (this.decided.size === 0) return
    const events = [...this.decided.values()]
    this.decided.clear()
    await client.query({
      name: 'cas-projector-signals-decided',
      text: `INSERT INTO rm_signals_decided (conversation_id, org_id, chatbot_id, decided_at)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[])
       ON CONFLICT (conversation_id) DO UPDATE SET decided_at = GREATEST(rm_signals_decided.decided_at, EXCLUDED.decided_at)`,
      values: [
        events.map((e) => e.streamId),
        events.map((e) => e.orgId),
        events.map((e) => e.chatbotId),
        events.map((e) => e.occurredAt),
      ],
    })
  }
}
