import { z } from 'zod'
import { type EventDefinition, recordedEventSchema } from './envelope.ts'
import { InvalidEventError } from './invalid-event-error.ts'

const base64url = (bytes: string) => z.string().regex(/^[A-Za-z0-9_-]+$/, `expected base64url (${bytes})`)

/**
 * The personal fields of a payload, encrypted with its chatbot's data key (AES-256-GCM). The plaintext
 * is the JSON object of those fields; the additional authenticated data is `sealedAad(event)`, so a box
 * cannot be moved to another event, stream or chatbot. Once the chatbot is deleted its data key is
 * destroyed and the box can never be opened again.
 */
export const sealedBoxSchema = z
  .strictObject({
    alg: z.literal('A256GCM').describe('AES-256-GCM with a per-chatbot data key.'),
    iv: base64url('12 bytes').describe('The 96-bit nonce, base64url.'),
    data: base64url('ciphertext, then the 16-byte tag').describe(
      'Ciphertext followed by the tag, base64url.',
    ),
  })
  .describe(
    "The event's personal fields, encrypted with the chatbot's data key. Open it with the library's " +
      '`openRecords` (libs/keyring); an event whose key was destroyed (chatbot deleted) is to be skipped.',
  )

export type SealedBox = z.output<typeof sealedBoxSchema>

/** A published event version whose personal fields travel encrypted in `payload.sealed`. */
export interface SealedEventDefinition extends EventDefinition {
  /** The same version as readers see it once opened: the personal fields back in the payload. */
  readonly opened: EventDefinition
  /** The payload fields held in the sealed box. */
  readonly personalFields: readonly string[]
}

/**
 * The wire form of `opened`: the same type and version, with `personalFields` moved into an encrypted
 * `sealed` box. Readers open it back into `opened`'s payload before upcasting and validating.
 */
export function sealedForm<const Definition extends EventDefinition>(
  opened: Definition,
  personalFields: readonly string[],
  example: Record<string, unknown>,
): SealedEventDefinition & Pick<Definition, 'type' | 'version' | 'streamType'> {
  if (!(opened.payload instanceof z.ZodObject)) throw new Error(`${opened.type} has no object payload`)
  const mask: Record<string, true> = Object.fromEntries(personalFields.map((field) => [field, true]))
  const payload = opened.payload.omit(mask as never).extend({ sealed: sealedBoxSchema })
  return {
    type: opened.type,
    version: opened.version,
    streamType: opened.streamType,
    description: `${opened.description} Personal fields (${personalFields.join(', ')}) are in \`payload.sealed\`, encrypted per chatbot.`,
    payload,
    example,
    schema: recordedEventSchema(opened.type, opened.version, payload),
    opened,
    personalFields,
  }
}

/** The additional authenticated data binding a sealed box to its event. */
export function sealedAad(event: {
  chatbotId: string
  streamId: string
  type: string
  version: number
}): Buffer {
  return Buffer.from(`${event.chatbotId}/${event.streamId}/${event.type}/v${event.version}`)
}

export type SealedRegistry = ReadonlyMap<string, SealedEventDefinition>

export function sealedRegistry(definitions: readonly EventDefinition[]): SealedRegistry {
  const sealed = new Map<string, SealedEventDefinition>()
  for (const definition of definitions) {
    if ('personalFields' in definition) {
      sealed.set(`${definition.type} v${definition.version}`, definition as SealedEventDefinition)
    }
  }
  return sealed
}

/**
 * Moves the personal fields of a payload into a sealed box made by `seal` (given their JSON); returns the
 * payload unchanged for a (type, version) that is not sealed.
 */
export function sealPayload(
  registry: SealedRegistry,
  event: { type: string; version: number; payload: unknown },
  seal: (plaintext: Buffer) => SealedBox,
): unknown {
  const definition = registry.get(`${event.type} v${event.version}`)
  if (!definition) return event.payload
  const payload = { ...(event.payload as Record<string, unknown>) }
  const personal: Record<string, unknown> = {}
  for (const field of definition.personalFields) {
    if (field in payload) personal[field] = payload[field]
    delete payload[field]
  }
  return { ...payload, sealed: seal(Buffer.from(JSON.stringify(personal))) }
}

/**
 * Puts the personal fields of a sealed raw event back into its payload (`open` decrypts the box); any
 * other event is returned as is. A box that is malformed or does not open is an InvalidEventError.
 */
export function openSealedEvent(
  registry: SealedRegistry,
  raw: unknown,
  open: (
    box: SealedBox,
    event: { chatbotId: string; streamId: string; type: string; version: number },
  ) => Buffer,
): unknown {
  if (typeof raw !== 'object' || raw === null) return raw
  const event = raw as Record<string, unknown>
  const definition = registry.get(`${String(event.type)} v${String(event.version)}`)
  if (!definition) return raw
  // The payload only: the envelope is validated with the opened event, by the reader's parse. A box
  // under another envelope (chatbot, stream, type, version) does not open: they are its AAD.
  const parsed = definition.payload.safeParse(event.payload)
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ['payload', ...issue.path] }))
    throw new InvalidEventError(issues, raw)
  }
  const { sealed, ...clear } = parsed.data as { sealed: SealedBox } & Record<string, unknown>
  const envelope = {
    chatbotId: String(event.chatbotId),
    streamId: String(event.streamId),
    type: String(event.type),
    version: Number(event.version),
  }
  let personal: unknown
  try {
    personal = JSON.parse(open(sealed, envelope).toString('utf8'))
  } catch (error) {
    throw new InvalidEventError(
      [
        {
          code: 'custom',
          path: ['payload', 'sealed'],
          message: `the sealed box does not open: ${String(error)}`,
        },
      ],
      raw,
    )
  }
  return { ...event, payload: { ...clear, ...(personal as Record<string, unknown>) } }
}
