import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { CAPTURES, CHROMIUM, STEP_TIMEOUT, signUp, useDashboard } from '../support/dashboard.ts'
import { waitFor } from '../support/wait.ts'

/**
 * A chatbot's page, in headless Chromium against the built app (test/support/dashboard-global-setup.ts):
 * create a chatbot from the keyboard and see its key once, send the test conversation and see the
 * onboarding turn green, edit its settings and rename it, capture with the key read from the page, rotate
 * the key (the old one gets 401) and delete the chatbot. Each page is checked with axe-core and for
 * logged errors, and saved as a screenshot.
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser: a chatbot', () => {
  const dashboard = useDashboard()
  const { app, checkPage, heading, figure, capture } = dashboard
  let page: Page
  let apiKey = ''
  let chatbotId = ''

  beforeAll(async () => {
    page = dashboard.page
    await signUp(page, { name: 'Ada', organizationName: 'Acme Support' })
    await page.goto('/chatbots')
    await heading('Chatbots').waitFor()
    await page.getByText('No chatbots yet').waitFor()
  }, 120_000)

  it(
    'creates a chatbot from the keyboard and shows its key once, with a copy button and a warning',
    async () => {
      await page.getByLabel('Chatbot name', { exact: true }).focus()
      await page.keyboard.type('Support bot')
      await page.keyboard.press('Enter')

      const keyBox = page.getByRole('textbox', { name: 'API key' })
      await keyBox.waitFor()
      apiKey = await keyBox.inputValue()
      expect(apiKey).toMatch(/^svc_live_[0-9a-f]{32}$/)
      chatbotId = new URL(page.url()).pathname.split('/')[2]!
      expect(await heading('Support bot').isVisible()).toBe(true)
      expect(await page.evaluate('document.activeElement?.tagName')).toBe('H1')
      expect(await page.getByText("you won't see this key again").isVisible()).toBe(true)

      await page.getByRole('button', { name: 'Copy key' }).click()
      await page.getByText('Copied', { exact: true }).waitFor()
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(apiKey)

      // The ready-to-paste examples carry the key and this server's address.
      const curl = await page.locator('pre').first().textContent()
      expect(curl).toContain(`Bearer ${apiKey}`)
      expect(curl).toContain(`${app.baseUrl}/api/v1/capture`)
      await page.getByText('Waiting for the first message').waitFor()
      await checkPage('04-chatbot-new-key')

      // A newcomer needs no terminal: the page sends the example with the key it just showed, and the
      // waiting status turns green without a reload.
      await page.getByRole('button', { name: 'Send a test conversation' }).click()
      await page.getByText('First message received').waitFor()
      await page.getByRole('link', { name: 'welcome-conversation' }).waitFor()
      await waitFor(async () => (await figure('Messages').textContent()) === '2', {
        what: 'the summary updated',
      })
      await checkPage('05-chatbot-first-message')

      // Shown once: after a reload the page no longer has it, only its prefix.
      await page.reload()
      await heading('Support bot').waitFor()
      expect(await keyBox.count()).toBe(0)
      expect(await page.getByText(apiKey).count()).toBe(0)
      expect(await page.locator('pre').first().textContent()).toContain('Bearer YOUR_API_KEY')
      // The test conversation needs no key in the page: still there, folded away with the examples.
      await page.getByText('Capture examples (curl, JavaScript, SDKs, OpenTelemetry)').click()
      await page.getByRole('button', { name: 'Send a test conversation' }).waitFor()
      expect(await page.getByText('First message received').count()).toBe(0)
      await page.getByText(apiKey.slice(0, 13), { exact: false }).first().waitFor()
    },
    STEP_TIMEOUT,
  )

  it(
    'edits the settings (custom fields, topics, retention) and renames the chatbot',
    async () => {
      await page.getByRole('button', { name: 'Add custom field' }).click()
      await page.getByLabel('Field 1 name').fill('plan')
      await page.getByRole('button', { name: 'Add topic' }).click()
      await page.getByLabel('Topic 1 label').fill('refunds')
      await page.getByLabel('Topic 1 keywords').fill('refund, money back')
      await page.getByLabel('Keep conversations for (days)').fill('0')
      await page.getByRole('button', { name: 'Save settings' }).click()
      await page.getByText('Retention must be a whole number of days').waitFor()

      await page.getByLabel('Keep conversations for (days)').fill('30')
      await page.getByRole('button', { name: 'Save settings' }).click()
      await page.getByText('Settings saved.').waitFor()
      const stored = await page.request.get(`/api/v1/chatbots/${chatbotId}`)
      expect((await stored.json()).settings).toEqual({
        customFields: { plan: 'string' },
        topics: { refunds: ['refund', 'money back'] },
        retentionDays: 30,
      })

      await page.getByLabel('Chatbot name', { exact: true }).fill('Support bot EU')
      await page.getByRole('button', { name: 'Rename' }).click()
      await heading('Support bot EU').waitFor()
      await checkPage('06-chatbot-settings')
    },
    STEP_TIMEOUT,
  )

  it(
    'takes captures with the key the page showed',
    async () => {
      const happy = await capture(apiKey, CAPTURES.happy)
      expect(happy).toMatchObject({ status: 200, body: { ok: true, messagesStored: 2, warnings: [] } })
      const unhappy = await capture(apiKey, CAPTURES.unhappy)
      // The custom field is in the schema set in the previous step: no warning.
      expect(unhappy).toMatchObject({ status: 200, body: { ok: true, messagesStored: 2, warnings: [] } })

      await checkPage('07-chatbot-receiving')
    },
    STEP_TIMEOUT,
  )

  it(
    'rotates the key after confirmation; the old key stops working at once',
    async () => {
      await page.goto(`/chatbots/${chatbotId}`)
      await heading('Support bot EU').waitFor()
      const rotate = page.getByRole('button', { name: 'Rotate key…' })
      await rotate.click()
      const dialog = page.getByRole('dialog', { name: 'Rotate the API key?' })
      await dialog.waitFor()
      await checkPage('12-rotate-dialog', false)
      // Escape closes it without rotating, and the focus goes back to the button that opened it.
      await page.keyboard.press('Escape')
      await dialog.waitFor({ state: 'hidden' })
      expect(await rotate.evaluate((el) => el.matches(':focus'))).toBe(true)
      expect(
        (
          await capture(apiKey, {
            conversationId: 'still-valid',
            messages: [{ id: 'x', role: 'user', content: 'hi' }],
          })
        ).status,
      ).toBe(200)

      await rotate.click()
      await dialog.getByRole('button', { name: 'Rotate key' }).click()
      const keyBox = page.getByRole('textbox', { name: 'API key' })
      await keyBox.waitFor()
      const newKey = await keyBox.inputValue()
      expect(newKey).toMatch(/^svc_live_[0-9a-f]{32}$/)
      expect(newKey).not.toBe(apiKey)
      expect(await keyBox.evaluate((el) => el.matches(':focus'))).toBe(true)
      expect(await page.getByText(`Current key: ${newKey.slice(0, 13)}`).count()).toBe(1)

      const message = {
        conversationId: 'after-rotation',
        messages: [{ id: 'm-1', role: 'user', content: 'Hello again' }],
      }
      expect((await capture(apiKey, message)).status).toBe(401)
      expect((await capture(newKey, message)).status).toBe(200)
      apiKey = newKey
      await checkPage('13-chatbot-rotated')
    },
    STEP_TIMEOUT,
  )

  it(
    'deletes the chatbot only once its name is typed, explaining that it is permanent',
    async () => {
      await page.getByRole('button', { name: 'Delete chatbot…' }).click()
      const dialog = page.getByRole('dialog', { name: 'Delete Support bot EU?' })
      await dialog.waitFor()
      await dialog.getByText('This is permanent and cannot be undone.').waitFor()
      const confirm = dialog.getByRole('button', { name: 'Delete permanently' })
      expect(await confirm.isDisabled()).toBe(true)
      await dialog.getByLabel('Type Support bot EU to confirm').fill('Support bot')
      expect(await confirm.isDisabled()).toBe(true)
      await dialog.getByLabel('Type Support bot EU to confirm').fill('Support bot EU')
      expect(await confirm.isEnabled()).toBe(true)
      await checkPage('14-delete-dialog', false)
      await confirm.click()

      await heading('Chatbots').waitFor()
      await page.getByText('No chatbots yet').waitFor()
      expect((await page.request.get(`/api/v1/chatbots/${chatbotId}`)).status()).toBe(404)
      const message = {
        conversationId: 'after-delete',
        messages: [{ id: 'm-1', role: 'user', content: 'Anyone?' }],
      }
      expect((await capture(apiKey, message)).status).toBe(401)
      await checkPage('15-chatbots-after-delete')
    },
    STEP_TIMEOUT,
  )
})
