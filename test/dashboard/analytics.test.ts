import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  CAPTURES,
  CHROMIUM,
  createSupportBot,
  STEP_TIMEOUT,
  signUp,
  useDashboard,
} from '../support/dashboard.ts'
import { waitFor } from '../support/wait.ts'

/**
 * The Analytics page, in headless Chromium against the built app (test/support/dashboard-global-setup.ts),
 * for a chatbot with four conversations (createSupportBot and CAPTURES.live): its figures, sentiment
 * trend, signals, top topics and messages by role, each chart's numbers as a table, and the range form.
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser: analytics', () => {
  const dashboard = useDashboard()
  const { checkPage, heading, figure, capture } = dashboard
  let page: Page
  let chatbotId = ''

  beforeAll(async () => {
    page = dashboard.page
    await signUp(page, { name: 'Ada', organizationName: 'Acme Support' })
    const bot = await createSupportBot(dashboard)
    chatbotId = bot.chatbotId
    expect((await capture(bot.apiKey, CAPTURES.live)).status).toBe(200)
    await page.goto('/chatbots')
    await heading('Chatbots').waitFor()
  }, 120_000)

  it(
    'shows the analytics: figures, sentiment trend, top topics and messages by role',
    async () => {
      await page.getByRole('link', { name: 'Analytics', exact: true }).click()
      await heading('Analytics').waitFor()
      await waitFor(async () => (await figure('Conversations').textContent()) === '4', {
        what: '4 conversations',
      })
      expect(await figure('Messages').textContent()).toBe('7')
      expect(await figure('End users').textContent()).toBe('3')
      // Six charts, drawn as soon as the overview, the trend and the signals have answered.
      await waitFor(async () => (await page.locator('canvas[role="img"]').count()) === 6, {
        what: '6 charts',
      })
      // The signals: every built-in one in the table, each leading to its conversations; Needs attention.
      const signals = page.locator('figure', { hasText: 'Conversations by signal' })
      await signals.getByText('Show the numbers as a table').click()
      expect(await signals.getByRole('link', { name: 'Bot failure', exact: true }).getAttribute('href')).toBe(
        '/conversations?signal=bot_failure',
      )
      await signals.getByRole('rowheader', { name: 'Abandonment' }).waitFor()
      await page.getByRole('heading', { level: 2, name: 'Needs attention' }).waitFor()
      await page.getByRole('heading', { level: 3, name: 'Knowledge gaps by topic' }).waitFor()

      const topics = page.locator('figure', { hasText: 'Top topics' })
      await topics.getByText('Show the numbers as a table').click()
      await topics.getByRole('rowheader', { name: 'refunds' }).waitFor()
      // Counted in conversations, as on the Topics page.
      await topics.getByRole('columnheader', { name: 'Conversations' }).waitFor()
      // A top topic leads to its conversations; the assistant's sentiment is told apart from the end users'.
      expect(
        await topics.getByRole('link', { name: 'refunds', exact: true }).first().getAttribute('href'),
      ).toMatch(/^\/conversations\?topic=[0-9a-f-]{36}$/)
      await page.getByText(/^Assistant messages: average [+\u22120]/).waitFor()
      const roles = page.locator('figure', { hasText: 'Messages by role' })
      await roles.getByText('Show the numbers as a table').click()
      expect(await roles.getByRole('row', { name: /user/ }).textContent()).toBe('user4')

      await page.getByLabel('Chatbot', { exact: true }).selectOption({ label: 'Support bot EU' })
      await page.getByLabel('Range', { exact: true }).selectOption('7')
      await page.getByLabel('Trend by', { exact: true }).selectOption('hour')
      await page.getByRole('button', { name: 'Show' }).click()
      await page.getByRole('heading', { name: 'Sentiment trend by hour' }).waitFor()
      const url = new URL(page.url())
      expect(Object.fromEntries(url.searchParams)).toEqual({ chatbotId, range: '7', interval: 'hour' })
      await waitFor(async () => (await figure('Conversations').textContent()) === '4', {
        what: 'the chatbot figures',
      })
      await checkPage('10-analytics')
    },
    STEP_TIMEOUT,
  )
})
