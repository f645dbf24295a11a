/**
 * Throughput of the local analyzer (services/analysis/src/providers/local.ts): sentiment and topics for N
 * realistic chat messages, one process, one core (the analyzer is synchronous CPU work).
 *
 *   npx tsx bench/local-analyzer.ts [--messages 20000] [--batch 20]
 *
 * Messages come from templates filled by a seeded generator, so every run analyzes the same text; they are
 * analyzed in conversation-sized batches with a chatbot topic list, as the analysis worker does. A warm-up
 * pass over the first 1,000 messages is not counted. Prints the machine, then messages/s.
 */
import { parseArgs } from 'node:util'
import type { MessageToAnalyze } from '../services/analysis/src/analyzer.ts'
import { createLocalAnalyzer } from '../services/analysis/src/providers/local.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { seededRandom as prng } from './support/random.ts'

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '20' },
  },
})
const N = Number(values.messages)
const BATCH = Number(values.batch)

const TOPICS = {
  billing: ['bill', 'invoice', 'charge', 'charged', 'credit card', 'payment'],
  shipping: ['shipping', 'delivery', 'package', 'parcel', 'tracking number'],
  returns: ['return', 'refund', 'exchange'],
  account: ['password', 'log in', 'login', 'account', 'two-factor'],
}

const PRODUCTS = [
  'umbrella',
  'blue jacket',
  'coffee maker',
  'running shoes',
  'wireless headphones',
  'standing desk',
  'phone case',
  'winter boots',
  'gift card',
  'laptop bag',
]
const USER_TEMPLATES = [
  'My refund for the {adj} {product} has not arrived yet',
  'Hi, I ordered a {product} {days} days ago and it still has not shipped. Where is my order?',
  'The {product} arrived {adj} and I want to return it',
  'Can I change the delivery address for order {num}?',
  'I was charged twice on my credit card for the {product}!!',
  'Thanks, that was really helpful :)',
  'This is the worst customer service I have ever had. I want my money back!',
  'I love the {product}, it works great 😍',
  'How do I reset my password? The reset email never came.',
  'The tracking number you sent does not work',
  'Is the {product} available in a larger size?',
  'ok thanks',
  'Your bot keeps giving me the same useless answer',
  'I CANNOT log in to my account since yesterday',
  'Do you ship to Canada? How long does delivery take?',
  'The {product} is not bad but the box was damaged',
  'Can I exchange the {product} for a different color?',
  'Perfect, thank you so much for the quick help 👍',
  'I am not happy with the quality of the {product}',
  'What is your return policy for sale items?',
]
const ASSISTANT_TEMPLATES = [
  'I am sorry to hear that. Could you share your order number so I can look into it?',
  'Your refund of {num} USD was issued and should appear within 5 business days.',
  'Sure! You can change the delivery address from the order page until the package ships.',
  'I have reset the two-factor authentication on your account. Please try to log in again.',
  'Great news: your {product} shipped today and the tracking number is {num}.',
  'You can return any item within 30 days for a full refund.',
]
const ADJECTIVES = ['broken', 'damaged', 'wrong', 'scratched', 'used', 'new', 'cracked', 'missing']

function generate(count: number): MessageToAnalyze[] {
  const random = prng(42)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const messages: MessageToAnalyze[] = []
  for (let i = 0; i < count; i++) {
    const user = i % 2 === 0
    const content = pick(user ? USER_TEMPLATES : ASSISTANT_TEMPLATES)
      .replaceAll('{product}', () => pick(PRODUCTS))
      .replaceAll('{adj}', () => pick(ADJECTIVES))
      .replaceAll('{days}', () => String(2 + Math.floor(random() * 20)))
      .replaceAll('{num}', () => String(10_000 + Math.floor(random() * 90_000)))
    messages.push({ id: `m${i}`, role: user ? 'user' : 'assistant', content })
  }
  return messages
}

async function run(analyzer: ReturnType<typeof createLocalAnalyzer>, messages: MessageToAnalyze[]) {
  let topics = 0
  for (let i = 0; i < messages.length; i += BATCH) {
    const results = await analyzer.analyzeMessages(messages.slice(i, i + BATCH), { topics: TOPICS })
    for (const r of results) topics += r.topics.length
  }
  return topics
}

console.log(machineLine(await machineInfo()))
const messages = generate(N)
const chars = messages.reduce((sum, m) => sum + m.content.length, 0)
const loadStart = performance.now()
const analyzer = createLocalAnalyzer()
console.log(
  `analyzer: ${analyzer.info.name} ${analyzer.info.version} (loaded in ${(performance.now() - loadStart).toFixed(0)} ms)`,
)
await run(analyzer, messages.slice(0, 1_000))

const start = performance.now()
const cpuStart = process.cpuUsage()
const topics = await run(analyzer, messages)
const seconds = (performance.now() - start) / 1000
const cpu = process.cpuUsage(cpuStart)
const cpuSeconds = (cpu.user + cpu.system) / 1e6
console.log(
  `${N.toLocaleString('en')} messages (avg ${Math.round(chars / N)} chars, batches of ${BATCH}, ` +
    `${(topics / N).toFixed(2)} topics/message) in ${seconds.toFixed(2)} s`,
)
console.log(`throughput, one core        ${Math.round(N / seconds).toLocaleString('en')} messages/s`)
console.log(`CPU time per message        ${((cpuSeconds / N) * 1e6).toFixed(0)} µs`)
