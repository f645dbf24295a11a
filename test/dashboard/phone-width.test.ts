import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { overflowsHorizontally } from '../support/browser.ts'
import {
  CHROMIUM,
  createSupportBot,
  STEP_TIMEOUT,
  signUp,
  useDashboard,
  waitForListed,
} from '../support/dashboard.ts'

/**
 * The main pages at phone width (390 px), in headless Chromium against the built app
 * (test/support/dashboard-global-setup.ts), for a chatbot with conversations (createSupportBot): none
 * scrolls sideways, each passes axe-core and logs no error. (test/dashboard-phone-browser.test.ts has the
 * phone's own defects.)
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser: the pages at phone width', () => {
  const dashboard = useDashboard()
  const { checkPage, heading, conversationLink } = dashboard
  let page: Page
  let chatbotId = ''

  beforeAll(async () => {
    page = dashboard.page
    await signUp(page, { name: 'Ada', organizationName: 'Acme Support' })
    ;({ chatbotId } = await createSupportBot(dashboard))
    // The test follows the negative conversation from the filtered list: once the analysis has said so.
    await waitForListed(page, 'sentiment=negative', 'order-1002')
  }, 120_000)

  it(
    'fits a phone screen',
    async () => {
      await page.setViewportSize({ width: 390, height: 844 })
      try {
        for (const [name, path, title] of [
          ['11-phone-chatbot', `/chatbots/${chatbotId}`, 'Support bot EU'],
          ['11-phone-conversations', '/conversations', 'Conversations'],
          ['11-phone-topics', `/topics?chatbotId=${chatbotId}`, 'Topics'],
          ['11-phone-analytics', '/analytics', 'Analytics'],
          ['11-phone-members', '/members', 'Members'],
        ] as const) {
          await page.goto(path)
          await heading(title).waitFor()
          await page.getByRole('navigation', { name: 'Main' }).waitFor()
          expect(await overflowsHorizontally(page), name).toBe(false)
          await checkPage(name)
        }
        await page.goto('/conversations?sentiment=negative')
        await conversationLink('order-1002').click()
        await heading('Conversation order-1002').waitFor()
        expect(await overflowsHorizontally(page)).toBe(false)
        await checkPage('11-phone-conversation')
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 })
      }
    },
    STEP_TIMEOUT,
  )
})
