/** Messages per capture request in every capture measurement. */
export const MESSAGES_PER_CAPTURE = 10

// A support chat: ten turns of typical length (40–120 characters), some positive, some negative.
export const TURNS = [
  ['user', 'Hi, I ordered a blue jacket five days ago and it still has not shipped. Where is my order?'],
  ['assistant', 'Sorry about the wait! Could you give me your order number so I can look it up?'],
  ['user', 'It is 48213. I paid for express delivery, so this is really frustrating.'],
  ['assistant', 'Thanks. Order 48213 left our warehouse this morning; the tracking number is in your email.'],
  ['user', 'The tracking link you sent does not work, it says the parcel is unknown.'],
  ['assistant', 'New tracking numbers take a few hours to show up. Please try again this afternoon.'],
  ['user', 'Ok. Can I get a refund for the express shipping since it was late?'],
  ['assistant', 'Of course, I have refunded the express shipping fee to your credit card.'],
  ['user', 'Great, thank you so much for the quick help!'],
  ['assistant', 'You are welcome! Is there anything else I can do for you today?'],
] as const

/**
 * The capture request every measurement sends: ten messages of a support chat, an end user and a
 * session, with ids made unique by `id` (a capture of ids already stored is deduplicated, not stored).
 */
export function captureBody(id: string) {
  const sentAt = new Date().toISOString()
  return {
    conversationId: `conv-${id}`,
    user: { id: `user-${id}`, plan: 'pro' },
    session: { pageUrl: 'https://shop.example.com/orders', device: 'desktop' },
    messages: TURNS.map(([role, content], i) => ({ id: `${id}-${i}`, role, content, sentAt })),
  }
}

export type BenchCaptureBody = ReturnType<typeof captureBody>
