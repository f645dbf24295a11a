import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { NOTICE_MIN_DETECTED } from '../../services/web/src/lib/language-notice.ts'
import { CAPTURES, CHROMIUM, STEP_TIMEOUT, signUp, useDashboard } from '../support/dashboard.ts'
import { waitFor } from '../support/wait.ts'

/**
 * The language notice (trial6: a Spanish train operator's chatbot was shown with sentiment, topics and
 * signals as if the analysis read Spanish), in headless Chromium against the built app: a chatbot whose
 * end users write Spanish (trial6's hand-written conversations, captured through the API) gets the notice
 * on Analytics, in Needs attention and on Topics; an English chatbot of the same organization does not.
 */
const TRIAL6 = JSON.parse(
  readFileSync(path.join(import.meta.dirname, '../../bench/data/trials/trial6-es-en.json'), 'utf8'),
) as {
  chatbots: { key: string; conversations: { id: string; turns: { role: string; content: string }[] }[] }[]
}
const SPANISH = TRIAL6.chatbots.find((b) => b.key === 'es')!.conversations.slice(0, 20)

describe.skipIf(!CHROMIUM)('the dashboard in a browser: the language notice', () => {
  const dashboard = useDashboard()
  const { heading, capture, figure, checkPage } = dashboard
  let page: Page
  let spanishBot = ''
  let englishBot = ''

  async function createBot(name: string): Promise<{ id: string; apiKey: string }> {
    const created = await page.request.post('/api/v1/chatbots', { data: { name } })
    expect(created.ok(), await created.text()).toBe(true)
    const { chatbot, apiKey } = (await created.json()) as { chatbot: { id: string }; apiKey: string }
    return { id: chatbot.id, apiKey }
  }

  beforeAll(async () => {
    page = dashboard.page
    await signUp(page, { name: 'Lucia', organizationName: 'Ferrovía' })
    const spanish = await createBot('Ferrovía asistente')
    spanishBot = spanish.id
    for (const c of SPANISH) {
      const body = {
        conversationId: c.id,
        messages: c.turns.map((t, i) => ({ id: `m-${i + 1}`, role: t.role, content: t.content })),
      }
      expect((await capture(spanish.apiKey, body)).status).toBe(200)
    }
    const english = await createBot('Support bot EU')
    englishBot = english.id
    for (const body of [CAPTURES.happy, CAPTURES.unhappy, CAPTURES.live])
      expect((await capture(english.apiKey, body)).status).toBe(200)
    // Analysed and projected: the overview counts the Spanish chatbot's detected messages.
    await waitFor(
      async () => {
        const res = await page.request.get(`/api/v1/analytics/overview?chatbotId=${spanishBot}`)
        const { languages } = (await res.json()) as { languages: { detected: number } }
        return res.ok() && languages.detected >= NOTICE_MIN_DETECTED
      },
      { timeoutMs: 120_000, what: 'the Spanish messages analysed' },
    )
  }, 240_000)

  it(
    "names the language on Analytics, in Needs attention and on Topics for the Spanish chatbot, not the English one's",
    async () => {
      const notice = page.getByRole('note', { name: 'Language notice' })
      await page.goto(`/analytics?chatbotId=${spanishBot}`)
      await heading('Analytics').waitFor()
      await waitFor(async () => (await notice.count()) === 2, { what: 'two notices on Analytics' })
      const text = (await notice.first().textContent()) ?? ''
      expect(text).toMatch(
        /^\d+ % of the end users' messages of this chatbot in this range are not in English/,
      )
      expect(text).toContain('mostly Spanish')
      expect(text).toContain('docs/analysis.md')
      const attention = page.locator('#needs-attention')
      expect(await attention.getByRole('note', { name: 'Language notice' }).count()).toBe(1)
      await checkPage('14-language-notice')

      await page.goto(`/topics?chatbotId=${spanishBot}`)
      await heading('Topics').waitFor()
      await notice.waitFor()
      expect(await notice.textContent()).toContain('mostly Spanish')

      // The English chatbot's page: its figures (the overview the notice reads) load, and no notice.
      await page.goto(`/analytics?chatbotId=${englishBot}`)
      await heading('Analytics').waitFor()
      await waitFor(async () => (await figure('Conversations').textContent()) === '3', {
        what: "the English chatbot's 3 conversations",
      })
      await page.getByRole('heading', { level: 2, name: 'Needs attention' }).waitFor()
      expect(await notice.count()).toBe(0)
    },
    STEP_TIMEOUT * 2,
  )
})
