import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { seriousAxeViolations } from '../support/browser.ts'
import { CHROMIUM, PASSWORD, STEP_TIMEOUT, useDashboard } from '../support/dashboard.ts'
import { waitFor } from '../support/wait.ts'

/**
 * Signing up and in, in headless Chromium against the built app (test/support/dashboard-global-setup.ts):
 * a visitor is sent to sign in, signs up (their organization's owner), finds the skip link and the empty
 * pages, signs out, and signs back in to the page they asked for. Every page passes axe-core with no
 * serious or critical violation, logs no error (a CSP violation would), and is saved as a screenshot under
 * .ci-artifacts/screenshots.
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser: sign-up and sign-in', () => {
  const dashboard = useDashboard()
  const { checkPage, heading } = dashboard
  let page: Page
  let errors: string[]
  const email = `ada-${randomUUID().slice(0, 8)}@example.com`
  const password = PASSWORD

  beforeAll(async () => {
    page = dashboard.page
    errors = dashboard.errors
  }, 120_000)

  it(
    'sends a visitor to sign in, and signs them up',
    async () => {
      await page.goto('/chatbots')
      await heading('Sign in').waitFor()
      expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/login?next=%2Fchatbots')
      await checkPage('01-sign-in')
      // The accessibility check is no formality: an input without a label is caught.
      await page.evaluate(
        "document.querySelector('form').insertAdjacentHTML('beforeend', '<input id=unlabelled>')",
      )
      expect((await seriousAxeViolations(page)).map((v) => v.id)).toContain('label')
      await page.evaluate("document.getElementById('unlabelled').remove()")

      await page.getByRole('link', { name: 'Create an account' }).click()
      await heading('Create your account').waitFor()
      await checkPage('02-sign-up')
      await page.getByLabel('Your name (optional)').fill('Ada')
      await page.getByLabel('Email', { exact: true }).fill(email)
      await page.getByLabel('Organization name').fill('Acme Support')
      await page.getByLabel('Password', { exact: true }).fill(password)
      await page.getByRole('button', { name: 'Create account' }).click()

      await heading('Chatbots').waitFor()
      expect(new URL(page.url()).pathname).toBe('/chatbots')
      // The organization switcher shows where the new account works, as its owner.
      expect(await page.getByLabel('Organization', { exact: true }).inputValue()).not.toBe('')
      await page
        .locator('#organization-switcher option:checked', { hasText: 'Acme Support (owner)' })
        .waitFor({
          state: 'attached',
        })
      await page.getByText('No chatbots yet').waitFor()
      // Keyboard users can skip the navigation: on a fresh load, the first Tab reaches the skip link.
      await page.reload()
      await heading('Chatbots').waitFor()
      await page.keyboard.press('Tab')
      expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content')
      await page.keyboard.press('Enter')
      await waitFor(() => page.evaluate("document.activeElement?.closest('main') !== null"), {
        what: 'the focus in the main region',
      })
      await checkPage('03-chatbots-empty')

      // Nothing captured yet: the Topics page says when topics will appear.
      await page.getByRole('link', { name: 'Topics', exact: true }).click()
      await heading('Topics').waitFor()
      await page.getByText('Topics appear once several end users ask about the same thing.').waitFor()
      await checkPage('03-topics-empty')
      await page.getByRole('link', { name: 'Chatbots', exact: true }).click()
      await heading('Chatbots').waitFor()
    },
    STEP_TIMEOUT,
  )

  it(
    'signs out, and signs back in to the page asked for',
    async () => {
      await page.getByRole('button', { name: 'Sign out' }).click()
      await heading('Sign in').waitFor()
      expect((await page.request.get('/api/v1/auth/me')).status()).toBe(401)

      await page.goto('/analytics?range=90')
      await heading('Sign in').waitFor()
      await page.getByLabel('Email', { exact: true }).fill(email)
      await page.getByLabel('Password', { exact: true }).fill('not the password')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('alert').getByText('The email or password is incorrect.').waitFor()
      await page.getByLabel('Password', { exact: true }).fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await heading('Analytics').waitFor()
      expect(new URL(page.url()).searchParams.get('range')).toBe('90')
      expect(errors).toEqual([])
    },
    STEP_TIMEOUT,
  )
})
