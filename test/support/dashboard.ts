import { randomUUID } from 'node:crypto'
import { type AppendRequest, appendToStreams, type JournalRecord, readStream } from '@cas/eventlog'
import pg from 'pg'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, inject } from 'vitest'
import {
  collectPageErrors,
  findChromium,
  launchChromium,
  screenshot,
  seriousAxeViolations,
} from './browser.ts'
import type { SharedApp } from './dashboard-global-setup.ts'
import { waitFor } from './wait.ts'

/**
 * What the browser test files share (test/dashboard/*.test.ts): the built app the run started once
 * (test/support/dashboard-global-setup.ts), a Chromium per file, and the organization each file signs up
 * for itself, so that the files run in any order.
 */

export const CHROMIUM = findChromium()
export const STEP_TIMEOUT = 90_000
export const PASSWORD = 'correct horse battery staple'

/** The captures the chatbot's page takes in test/dashboard/chatbots.test.ts, which other files start from. */
export const CAPTURES = {
  happy: {
    conversationId: 'order-1001',
    messages: [
      { id: 'm-1', role: 'user', content: 'Thank you so much, this is wonderful and works great!' },
      { id: 'm-2', role: 'assistant', content: 'Happy to help!' },
    ],
    user: { id: 'u-1', name: 'Ada' },
  },
  unhappy: {
    conversationId: 'order-1002',
    messages: [
      { id: 'm-1', role: 'user', content: 'This is terrible. My refund never arrived and I am angry.' },
      { id: 'm-2', role: 'assistant', content: 'I am sorry about the refund delay.' },
    ],
    user: { id: 'u-2', name: 'Grace', email: 'grace@example.com' },
    session: { device: 'mobile' },
    custom: { plan: 'pro' },
  },
  /** The one the Conversations page sees arrive. */
  live: {
    conversationId: 'order-1003',
    messages: [{ id: 'm-1', role: 'user', content: 'Is there a discount for annual plans?' }],
  },
}

/** The settings the chatbot's page saves in test/dashboard/chatbots.test.ts. */
export const SUPPORT_BOT_SETTINGS = {
  customFields: { plan: 'string' },
  topics: { refunds: ['refund', 'money back'] },
  retentionDays: 30,
}

export interface Dashboard {
  /** The shared app: `baseUrl`, and `databaseUrl()` of its embedded Postgres. */
  readonly app: { readonly baseUrl: string; databaseUrl(): string }
  readonly browser: Browser
  /** The file's page (1280 × 900), and what it has logged as errors since its last check. */
  readonly page: Page
  readonly errors: string[]
  /** Saves the page as `name`, then checks it with axe-core and that it logged no error. */
  checkPage(name: string, fullPage?: boolean): Promise<void>
  heading(name: string | RegExp): ReturnType<Page['getByRole']>
  /** The value of a figure (`dl.figures`) by its label. */
  figure(label: string): ReturnType<Page['locator']>
  conversationLink(id: string): ReturnType<Page['getByRole']>
  capture(
    key: string,
    body: Record<string, unknown>,
  ): Promise<{ status: number; body: Record<string, unknown> }>
}

/**
 * The built app the browser test files share: the first to ask starts it (a build and `npm start`'s
 * service), which may take a while; the others get the same.
 */
export async function sharedApp(): Promise<SharedApp> {
  const url = inject('dashboardAppUrl')
  if (!url) throw new Error('no shared app: Chromium was not found')
  const response = await fetch(url, { signal: AbortSignal.timeout(600_000) })
  if (!response.ok) throw new Error(`the shared app did not start: ${await response.text()}`)
  return (await response.json()) as SharedApp
}

/**
 * Opens the shared app in a Chromium of the file's own (before the file's tests, closed after them).
 * Call it in the file's describe; its page is there from the first beforeAll on.
 */
export function useDashboard(): Dashboard {
  let shared: SharedApp | undefined
  let browser: Browser | undefined
  let page: Page | undefined
  let errors: string[] = []
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not open yet (use it in a test or beforeAll)`)
    return value
  }
  beforeAll(async () => {
    shared = await sharedApp()
    browser = await launchChromium(CHROMIUM!)
    const context = await browser.newContext({
      baseURL: shared.baseUrl,
      viewport: { width: 1280, height: 900 },
      reducedMotion: 'reduce',
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: shared.baseUrl })
    page = await context.newPage()
    page.setDefaultTimeout(20_000)
    // The app asks who is signed in on load (401 when nobody is) and the wrong-password step gets a 401.
    errors = collectPageErrors(page, (text) => text.includes('status of 401'))
  }, 660_000)
  afterAll(async () => {
    await browser?.close()
  })
  const dashboard: Dashboard = {
    app: {
      get baseUrl() {
        return need(shared, 'the shared app').baseUrl
      },
      databaseUrl: () => need(shared, 'the shared app').databaseUrl,
    },
    get browser() {
      return need(browser, 'the browser')
    },
    get page() {
      return need(page, 'the page')
    },
    get errors() {
      return errors
    },
    async checkPage(name, fullPage = true) {
      const current = need(page, 'the page')
      await screenshot(current, name, fullPage)
      const violations = await seriousAxeViolations(current)
      expect(violations, `${name}: ${JSON.stringify(violations, null, 2)}`).toEqual([])
      // Taken out as they are checked, so one step's error is reported by that step only.
      const logged = errors.splice(0)
      expect(logged, `${name}: ${logged.join('\n').slice(0, 2_000)}`).toEqual([])
    },
    heading: (name) => need(page, 'the page').getByRole('heading', { level: 1, name }),
    figure: (label) => {
      const current = need(page, 'the page')
      return current
        .locator('dl.figures > div', { has: current.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
        .locator('dd')
    },
    conversationLink: (id) => need(page, 'the page').getByRole('link', { name: id, exact: true }),
    async capture(key, body) {
      const response = await fetch(`${need(shared, 'the shared app').baseUrl}/api/v1/capture`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    },
  }
  return dashboard
}

/**
 * Signs a new person up through the API in the page's browser (so with its cookies), founding an
 * organization of their own; resolves to their email.
 */
export async function signUp(page: Page, who: { name: string; organizationName: string }): Promise<string> {
  const email = `${who.name.toLowerCase()}-${randomUUID().slice(0, 8)}@example.com`
  const response = await page.request.post('/api/v1/auth/signup', {
    data: { email, password: PASSWORD, name: who.name, organizationName: who.organizationName },
  })
  expect(response.ok(), await response.text()).toBe(true)
  return email
}

/** The twenty captures the Conversations page pages through (test/dashboard/conversations.test.ts). */
export const bulkCaptures = () =>
  Array.from({ length: 20 }, (_, i) => ({
    conversationId: `bulk-${String(i + 1).padStart(2, '0')}`,
    messages: [{ id: 'm-1', role: 'user', content: `Question number ${i + 1}` }],
  }))

/**
 * The chatbot test/dashboard/chatbots.test.ts makes through its page, made through the API: "Support bot
 * EU" with SUPPORT_BOT_SETTINGS, its test conversation (welcome-conversation) and CAPTURES.happy and
 * .unhappy, in that order. Resolves to its id and key.
 */
export async function createSupportBot(dashboard: Dashboard): Promise<{ chatbotId: string; apiKey: string }> {
  const { page } = dashboard
  const created = await page.request.post('/api/v1/chatbots', { data: { name: 'Support bot EU' } })
  expect(created.ok(), await created.text()).toBe(true)
  const { chatbot, apiKey } = (await created.json()) as { chatbot: { id: string }; apiKey: string }
  const saved = await page.request.patch(`/api/v1/chatbots/${chatbot.id}`, {
    data: { settings: SUPPORT_BOT_SETTINGS },
  })
  expect(saved.ok(), await saved.text()).toBe(true)
  const welcome = await page.request.post(`/api/v1/chatbots/${chatbot.id}/test-conversation`)
  expect(welcome.ok(), await welcome.text()).toBe(true)
  for (const body of [CAPTURES.happy, CAPTURES.unhappy])
    expect((await dashboard.capture(apiKey, body)).status).toBe(200)
  return { chatbotId: chatbot.id, apiKey }
}

/** Waits until the API lists `conversationId` among the conversations `query` finds (analysed, projected). */
export async function waitForListed(page: Page, query: string, conversationId: string): Promise<void> {
  await waitFor(
    async () => {
      const res = await page.request.get(`/api/v1/conversations?${query}`)
      const { conversations } = (await res.json()) as { conversations: { conversationId: string }[] }
      return res.ok() && conversations.some((c) => c.conversationId === conversationId)
    },
    { timeoutMs: 90_000, what: `${conversationId} listed for ${query}` },
  )
}

/**
 * Appends events to the shared app's event journal as its own services do (appendToStreams, in a
 * transaction), for the states a browser test cannot bring about through the API: a signal an LLM
 * confirmed, a re-clustering that failed. The app's projector takes them from there like any other.
 */
export async function appendToAppJournal(dashboard: Dashboard, requests: AppendRequest[]): Promise<void> {
  const client = new pg.Client({ connectionString: dashboard.app.databaseUrl() })
  await client.connect()
  try {
    await client.query('BEGIN')
    await appendToStreams(client, requests)
    await client.query('COMMIT')
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    await client.end()
  }
}

/** The stream's events in the shared app's journal, in order (payloads as stored). */
export async function appJournalStream(
  dashboard: Dashboard,
  streamType: AppendRequest['streamType'],
  streamId: string,
): Promise<JournalRecord[]> {
  const client = new pg.Client({ connectionString: dashboard.app.databaseUrl() })
  await client.connect()
  try {
    return await readStream(client, streamType, streamId)
  } finally {
    await client.end()
  }
}
