import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, STEP_TIMEOUT, signUp, useDashboard, waitForListed } from '../support/dashboard.ts'
import { waitFor } from '../support/wait.ts'

/**
 * The Analytics page for a viewer in Asia/Kolkata (+05:30, local midnight at :30 UTC), in headless
 * Chromium against the built app (test/support/dashboard-global-setup.ts): a custom range of whole days,
 * its day buckets, and the conversations its links lead to.
 *
 * Regression: the range of the 18th and 19th showed as "11:30 PM to 12:30 AM", the trend began with a
 * one-conversation day before the first (the 17th), and a link's since/until reached into the 20th.
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser: analytics in a half-hour time zone', () => {
  const dashboard = useDashboard()
  let page: Page
  let chatbotId = ''
  /** The value of a figure by its label, on this file's page (dashboard.figure reads the shared one). */
  const figure = (label: string) =>
    page
      .locator('dl.figures > div', { has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
      .locator('dd')

  /** One end-user message per conversation (local times in Kolkata). */
  const AT: Record<string, string> = {
    'kolkata-early': '2026-11-17T17:50:00Z', // 17th 23:20
    'kolkata-edge': '2026-11-17T18:10:00Z', // 17th 23:40, in the hour the 18th's bucket starts with
    'kolkata-first': '2026-11-17T18:30:00Z', // 18th 00:00
    'kolkata-last': '2026-11-19T17:59:00Z', // 19th 23:29
    'kolkata-late': '2026-11-19T18:20:00Z', // 19th 23:50, in the hour the 20th's bucket starts with
    'kolkata-after': '2026-11-19T18:30:00Z', // 20th 00:00
  }

  beforeAll(async () => {
    const context = await dashboard.browser.newContext({
      baseURL: dashboard.app.baseUrl,
      viewport: { width: 1280, height: 900 },
      reducedMotion: 'reduce',
      timezoneId: 'Asia/Kolkata',
      locale: 'en-US',
    })
    page = await context.newPage()
    page.setDefaultTimeout(20_000)
    await signUp(page, { name: 'Indira', organizationName: 'Kolkata Support' })
    const created = await page.request.post('/api/v1/chatbots', { data: { name: 'Kolkata bot' } })
    expect(created.ok(), await created.text()).toBe(true)
    const { chatbot, apiKey } = (await created.json()) as { chatbot: { id: string }; apiKey: string }
    chatbotId = chatbot.id
    for (const [conversationId, sentAt] of Object.entries(AT)) {
      const body = {
        conversationId,
        messages: [{ id: 'm-1', role: 'user', content: 'Is my order late?', sentAt }],
      }
      expect((await dashboard.capture(apiKey, body)).status).toBe(200)
    }
    await waitForListed(page, `chatbotId=${chatbotId}`, 'kolkata-early')
    await waitForListed(page, `chatbotId=${chatbotId}`, 'kolkata-after')
  }, 120_000)
  afterAll(async () => {
    await page?.context().close()
  })

  it(
    'counts chosen days from the hour of their midnight, in day buckets of those days only, as its links do',
    async () => {
      await page.goto(
        `/analytics?chatbotId=${chatbotId}&range=custom&from=2026-11-18&to=2026-11-19&interval=day`,
      )
      await waitFor(async () => (await figure('Conversations').textContent()) === '3', {
        what: '3 conversations',
      })
      // Chromium names the zone by its older name, Asia/Calcutta.
      await page
        .getByText(/^Nov 17, 2026, 11:30 PM to Nov 19, 2026, 11:30 PM \(Asia\/(Kolkata|Calcutta)\)/)
        .waitFor()

      const trend = page.locator('figure', { hasText: 'Sentiment trend by day' })
      await trend.getByText('Show the numbers as a table').click()
      const periods = await trend.locator('tbody tr > :first-child').allTextContents()
      expect(periods).toHaveLength(2)
      expect(periods.join(' ')).not.toMatch(/17/)

      // A figure's link carries the range it was counted over, and the list holds what it counted.
      const signals = page.locator('figure', { hasText: 'Conversations by signal' })
      await signals.getByText('Show the numbers as a table').click()
      const href = await signals.getByRole('link', { name: 'Bot failure', exact: true }).getAttribute('href')
      const linked = new URLSearchParams(href!.split('?')[1])
      expect([linked.get('since'), linked.get('until')]).toEqual([
        '2026-11-17T18:00:00.000Z',
        '2026-11-19T18:00:00.000Z',
      ])
      const listed = page.locator('.conversation-list > li')
      const range = `since=${linked.get('since')}&until=${linked.get('until')}`
      await page.goto(`/conversations?chatbotId=${chatbotId}&${range}`)
      await waitFor(async () => (await listed.count()) === 3, { what: 'the 3 conversations counted' })
      for (const id of ['kolkata-edge', 'kolkata-first', 'kolkata-last'])
        await page.getByRole('link', { name: id, exact: true }).waitFor()

      // An older link, with the range to the hour as the API used to resolve it, still filters the list.
      await page.goto(
        `/conversations?chatbotId=${chatbotId}&since=2026-11-17T18:00:00Z&until=2026-11-19T19:00:00Z`,
      )
      await waitFor(async () => (await listed.count()) === 5, {
        what: 'the 5 conversations of the old range',
      })
      await page.getByRole('link', { name: 'kolkata-after', exact: true }).waitFor()
    },
    STEP_TIMEOUT,
  )
})
