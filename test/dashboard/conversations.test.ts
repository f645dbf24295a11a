import { randomUUID } from 'node:crypto'
import { newEvent } from '@cas/events'
import pg from 'pg'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  appendToAppJournal,
  appJournalStream,
  bulkCaptures,
  CAPTURES,
  CHROMIUM,
  createSupportBot,
  STEP_TIMEOUT,
  signUp,
  useDashboard,
} from '../support/dashboard.ts'
import { hasTestModel } from '../support/model.ts'
import { waitFor } from '../support/wait.ts'

/**
 * The Conversations page and a conversation's, in headless Chromium against the built app
 * (test/support/dashboard-global-setup.ts), for a chatbot with a test conversation and two captures
 * (createSupportBot): the conversations and their sentiment appear without a reload, filter, take a new
 * one as it arrives, page with the cursor; a transcript with per-message sentiment and its metadata; and
 * the line saying how far behind conversations and analysis are while a long transaction (held by the
 * test on the app's own Postgres) stalls the projector and the analysis service, then "Up to date"; a
 * signal an LLM confirmed (SIGNALS_LLM_REFINE) says so on its chip and with its evidence.
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser: conversations', () => {
  const dashboard = useDashboard()
  const { app, checkPage, heading, conversationLink, capture } = dashboard
  let page: Page
  let apiKey = ''

  /** A link of the main navigation (a conversation's page has a "Conversations" link of its own). */
  const navLink = (name: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true })

  beforeAll(async () => {
    page = dashboard.page
    await signUp(page, { name: 'Ada', organizationName: 'Acme Support' })
    ;({ apiKey } = await createSupportBot(dashboard))
    await page.goto('/chatbots')
    await heading('Chatbots').waitFor()
  }, 120_000)

  it(
    'lists conversations with their sentiment, filters them, and shows new ones as they arrive',
    async () => {
      await navLink('Conversations').click()
      await heading('Conversations').waitFor()
      const item = (id: string) => page.getByRole('listitem').filter({ has: conversationLink(id) })
      // The analysis results arrive after the conversations: the list picks them up by itself.
      await item('order-1001')
        .getByText(/^Positive/)
        .waitFor()
      await item('order-1002')
        .getByText(/^Negative/)
        .waitFor()
      await item('order-1002').getByText('refunds', { exact: true }).waitFor()
      // Each conversation shows the end user's first message, so that the list can be scanned.
      await item('order-1002')
        .getByText('This is terrible. My refund never arrived and I am angry.', { exact: true })
        .waitFor()
      await item('order-1001')
        .getByText('Thank you so much, this is wonderful and works great!', { exact: true })
        .waitFor()
      expect(await item('order-1001').getByText('Happy to help!').count()).toBe(0)

      const only = async (id: string) => {
        await conversationLink(id).waitFor()
        await waitFor(async () => (await page.locator('.conversation-list > li').count()) === 1, {
          what: `only ${id} listed`,
        })
      }
      await page.getByLabel('Sentiment', { exact: true }).selectOption('negative')
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await only('order-1002')
      expect(new URL(page.url()).searchParams.get('sentiment')).toBe('negative')
      await page.getByRole('button', { name: 'Clear filters' }).click()

      await page.getByLabel('Topic', { exact: true }).fill('refunds')
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await only('order-1002')
      await page.getByRole('button', { name: 'Clear filters' }).click()

      await page.getByLabel('Text in messages', { exact: true }).fill('wonderful')
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await only('order-1001')
      await page.getByRole('button', { name: 'Clear filters' }).click()

      await page.getByLabel('End user id', { exact: true }).fill('u-2')
      await page.getByLabel('Chatbot', { exact: true }).selectOption({ label: 'Support bot EU' })
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await only('order-1002')
      await page.getByRole('button', { name: 'Clear filters' }).click()
      await conversationLink('order-1001').waitFor()

      const live = await capture(apiKey, CAPTURES.live)
      expect(live.status).toBe(200)
      await conversationLink('order-1003').waitFor()
      await checkPage('08-conversations')
    },
    STEP_TIMEOUT,
  )

  it(
    'shows a conversation as a transcript with per-message sentiment and its metadata',
    async () => {
      await conversationLink('order-1002').click()
      await heading('Conversation order-1002').waitFor()
      const messages = page.locator('ol.transcript > li')
      expect(await messages.count()).toBe(2)
      await messages
        .nth(0)
        .getByText(/^Negative/)
        .waitFor()
      expect(await messages.nth(0).textContent()).toContain('My refund never arrived')
      await messages
        .nth(1)
        .getByText(/^(Positive|Neutral|Negative) /)
        .waitFor()
      const details = page.getByRole('complementary', { name: 'Details' })
      await details.getByText('grace@example.com').waitFor()
      await details.getByText('pro', { exact: true }).waitFor()
      await details.getByText('mobile', { exact: true }).waitFor()
      await checkPage('09-conversation')
    },
    STEP_TIMEOUT,
  )

  it(
    "says so for a bookmarked chatbot's conversations once the chatbot is gone, and offers every chatbot's",
    async () => {
      // The list answered an unknown chatbot with no conversations; it is 404 now, which the page must explain.
      await page.goto(`/conversations?chatbotId=${randomUUID()}`)
      await heading('Conversations').waitFor()
      await page
        .getByText('There is no such chatbot in your organization (it may have been deleted).')
        .waitFor()
      await page.getByRole('button', { name: "Show every chatbot's conversations" }).click()
      await conversationLink('order-1002').waitFor()
      expect(new URL(page.url()).searchParams.has('chatbotId')).toBe(false)
      expect(await page.getByRole('alert').count()).toBe(0)
      // The browser logs the list's 404 for the gone chatbot, which this step expects: taken out here, so that
      // the next step's checkPage does not report it as its own.
      expect(dashboard.errors.splice(0)).toEqual([
        'console: Failed to load resource: the server responded with a status of 404 (Not Found)',
      ])
    },
    STEP_TIMEOUT,
  )

  it(
    'pages through conversations with the cursor',
    async () => {
      const bulk = bulkCaptures().map((body) => capture(apiKey, body))
      expect((await Promise.all(bulk)).map((r) => r.status)).toEqual(Array(20).fill(200))
      // Lists are eventually consistent: page once all 24 conversations are projected.
      await waitFor(
        () =>
          page.evaluate(async () => {
            const res = await fetch('/api/v1/conversations?limit=100')
            return res.ok && ((await res.json()) as { conversations: unknown[] }).conversations.length === 24
          }),
        { what: 'all 24 conversations to be projected' },
      )
      await navLink('Conversations').click()
      await heading('Conversations').waitFor()
      const items = page.locator('.conversation-list > li')
      const older = page.getByRole('button', { name: 'Older' })
      const olderOff = async () => (await older.getAttribute('aria-disabled')) === 'true'
      await waitFor(async () => (await items.count()) === 20 && !(await olderOff()), {
        what: 'a full page',
      })
      // By the keyboard: the focus stays on Older while the next page loads and after (trial12: it fell to
      // the page's start), and the page number is announced.
      await older.focus()
      await page.keyboard.press('Enter')
      await page.getByRole('navigation', { name: 'Conversation pages' }).getByText('Page 2').waitFor()
      await conversationLink('order-1001').waitFor()
      expect(await items.count()).toBe(4)
      expect(await olderOff()).toBe(true)
      expect(await older.evaluate((el) => el.matches(':focus'))).toBe(true)
      expect(await page.getByText('Page 2').getAttribute('aria-live')).toBe('polite')
      await page.keyboard.press('Enter')
      expect(await items.count()).toBe(4)
      await page.getByRole('button', { name: 'Newer' }).click()
      await page.getByText('Page 1').waitFor()
      await conversationLink('bulk-20').waitFor()
    },
    STEP_TIMEOUT,
  )

  it(
    'says how current the figures are: how far behind while projection and analysis are held up, then up to date',
    async () => {
      await navLink('Conversations').click()
      await heading('Conversations').waitFor()
      const freshness = page.getByRole('main').locator('p.freshness[role="status"]')
      await freshness.getByText('Up to date', { exact: true }).waitFor({ timeout: 60_000 })

      // Given a long transaction holding the tables the projector and the analysis service write, as an
      // operator's migration or a forgotten session would: both stall, while capture and reads go on
      const db = new pg.Client({ connectionString: app.databaseUrl() })
      await db.connect()
      try {
        await db.query('BEGIN')
        await db.query('LOCK TABLE rm_conversations, analysis_jobs IN SHARE MODE')
        // When a conversation is captured
        const sent = await capture(apiKey, {
          conversationId: 'held-up',
          messages: [{ id: 'm-1', role: 'user', content: 'Is anyone there? I have been waiting for ages.' }],
        })
        expect(sent.status).toBe(200)
        // Then the page says, by itself, that both are behind and by how much, and the list lacks it
        await waitFor(
          async () =>
            /^Conversations \d+ s behind · Analysis \d+ s behind$/.test(
              (await freshness.textContent()) ?? '',
            ),
          { timeoutMs: 60_000, what: 'the page to say both are behind' },
        )
        expect(await conversationLink('held-up').count()).toBe(0)
        await checkPage('10c-figures-behind')
      } finally {
        await db.query('ROLLBACK').catch(() => {})
        await db.end()
      }

      // When the transaction ends, both catch up, and the page says so (and lists the conversation)
      await freshness.getByText('Up to date', { exact: true }).waitFor({ timeout: 60_000 })
      await conversationLink('held-up').waitFor()
      // The same figures for operators: /readyz describes them, and stays ready.
      const ready = await fetch(`${app.baseUrl}/readyz`)
      expect(ready.status).toBe(200)
      expect(((await ready.json()) as { details: unknown }).details).toMatchObject({
        projection: { state: 'up-to-date' },
        analysis: { state: 'up-to-date', jobs: 0 },
      })
    },
    STEP_TIMEOUT,
  )

  it.skipIf(!hasTestModel)(
    'says which LLM confirmed a signal, on its chip and with its evidence, and not on the local ones',
    async () => {
      // Given a conversation the bot fails in, with its signals as the local model decided them
      const sent = await capture(apiKey, {
        conversationId: 'refined-1',
        messages: [
          { id: 'm-1', role: 'user', content: 'How do I pair my headphones with the app?' },
          { id: 'm-2', role: 'assistant', content: "I'm not sure I understand." },
        ],
      })
      expect(sent.status).toBe(200)
      const id = String(sent.body.conversationId)
      type ApiSignal = { name: string; refinedBy: string | null }
      const apiSignals = async () => {
        const res = await page.request.get(`/api/v1/conversations/${id}`)
        return res.ok() ? ((await res.json()).conversation.signals as ApiSignal[]) : []
      }
      await waitFor(async () => (await apiSignals()).some((s) => s.name === 'bot_failure'), {
        timeoutMs: 90_000,
        what: 'the bot failure detected and projected',
      })
      expect((await apiSignals()).every((s) => s.refinedBy === null)).toBe(true)
      await page.goto(`/conversations/${id}`)
      await heading('Conversation refined-1').waitFor()
      const chips = page.getByRole('list', { name: 'Signals', exact: true })
      await chips.getByText('Bot failure', { exact: true }).waitFor()
      const evidence = page.getByRole('region', { name: 'Signals', exact: true })
      expect(await evidence.textContent()).not.toContain('refined by')

      // When the LLM confirms the bot failure: the analysis.signals-detected its refiner announces (the
      // same signals, the bot failure with refinedBy), appended to the app's journal as the refiner does.
      // (The refiner asks only about signals below 0.75 confidence; the page shows what the event says.)
      const [last] = (await appJournalStream(dashboard, 'analysis', id))
        .filter((e) => e.type === 'analysis.signals-detected')
        .slice(-1)
      const local = last!.payload as {
        analyzer: { name: string; version: string }
        signals: { name: string; confidence: number; evidence: string[]; label?: string }[]
        settled: boolean
      }
      await appendToAppJournal(dashboard, [
        {
          streamType: 'analysis',
          streamId: id,
          orgId: last!.orgId,
          chatbotId: last!.chatbotId,
          expectedVersion: 'any',
          events: [
            newEvent('analysis.signals-detected', {
              ...local,
              signals: local.signals.map((s) =>
                s.name === 'bot_failure' ? { ...s, refinedBy: 'llm:judge-model' } : s,
              ),
            }),
          ],
        },
      ])

      // Then the page, polling by itself, says so on the chip and with the evidence; the API too
      await chips
        .getByText('Bot failure · refined by judge-model', { exact: true })
        .waitFor({ timeout: 60_000 })
      const items = await evidence.getByRole('listitem').allTextContents()
      expect(items.filter((t) => t.includes('refined by'))).toEqual([
        expect.stringMatching(/^Bot failure \(\d+ % confidence, refined by judge-model\)/),
      ])
      expect(items.length).toBe(local.signals.length)
      const shown = await apiSignals()
      expect(shown.find((s) => s.name === 'bot_failure')?.refinedBy).toBe('llm:judge-model')
      for (const s of shown.filter((x) => x.name !== 'bot_failure')) expect(s.refinedBy).toBeNull()
      await checkPage('09b-conversation-refined-signal')

      // And the list's chip says it too
      await page.goto(`/conversations?signal=bot_failure`)
      await heading('Conversations').waitFor()
      await page
        .locator('.conversation-list > li')
        .filter({ has: conversationLink('refined-1') })
        .getByText('Bot failure · refined by judge-model', { exact: true })
        .waitFor()
    },
    STEP_TIMEOUT,
  )
})
