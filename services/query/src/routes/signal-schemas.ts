import { signalNameSchema } from '@cas/events'
import { z } from 'zod'

export const signalParamSchema = signalNameSchema

export const conversationSignalSchema = z.object({
  name: z
    .string()
    .describe('escalation, bot_failure, repetition, frustration, resolution, abandonment, or custom:<slug>.'),
  label: z.string().nullable().describe("A chatbot's own signal's label; null for a built-in one."),
  confidence: z.number().describe('0.5 at the threshold, towards 1 beyond it.'),
  evidence: z.array(z.string()).describe('The ids of the messages it fired on, in conversation order.'),
  refinedBy: z
    .string()
    .nullable()
    .describe(
      'The LLM that confirmed this borderline signal, `llm:<model>` (SIGNALS_LLM_REFINE=borderline, docs/analysis.md); null when the local model alone decided it.',
    ),
})
