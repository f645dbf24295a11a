import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'

type SignalsDetected = RecordedEvent<'analysis.signals-detected'>

/**
 * rm_conversation_signals: each conversation's signals as its last analysis.signals-detected gave them
 * (each event replaces the conversation's earlier signals). Events of one conversation come in stream
 * order, so the last of a batch is the one to keep. `refined_by` is the signal's `refinedBy` (the LLM that
 * confirmed it, `llm:<model>`), null when the local model alone decided it.
 */
export class SignalChanges {
  private readonly latest = new Map<string, SignalsDetected>()

  add(event: SignalsDetected): void {
    this.latest.set(event.streamId, event)
  }

  async flush(client: pg.ClientBase): Promise<void> {
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
        analyzer: `${e.payload.analyzer.name}@${e.payload.analyzer.version}`,
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
}
