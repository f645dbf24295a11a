import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  clearScreenshots,
  collectPageErrors,
  findChromium,
  launchChromium,
  overflowsHorizontally,
  SCREENSHOT_DIR,
  screenshot,
  seriousAxeViolations,
} from './support/browser.ts'
import { type BuiltApp, buildApp, startBuiltApp } from './support/built-app.ts'
import { hasTestModel, modelConfigEnv, requireTestModel } from './support/model.ts'
import { waitFor } from './support/wait.ts'

const CHROMIUM = findChromium()
if (!CHROMIUM && process.env.CI === 'true') {
  throw new Error('Chromium is required for the browser tests in CI (apt-get install chromium)')
}
if (!CHROMIUM) {
  console.warn(
    `\n${'!'.repeat(78)}\n!! Chromium not found: the dashboard's browser tests are SKIPPED. Install Debian's\n!! \`chromium\` package (or set CHROMIUM_PATH) to run them. CI never skips them.\n${'!'.repeat(78)}\n`,
  )
}

// The Topics step needs the language model the app analyses with (../shared/models, never downloaded).
requireTestModel()

const STEP_TIMEOUT = 90_000

/** Paraphrases of two end-user requests (hand-written), each answered with the same boilerplate. */
const REQUESTS = {
  password: [
    'How do I reset my password?',
    "I forgot my password and can't sign in",
    'I need to change my password',
    "The password reset link isn't arriving",
    'how can I recover my password',
  ],
  delivery: ['Where is my order?', "My package hasn't arrived yet", 'When will my order be delivered?'],
}
const BOILERPLATE = 'I am sorry to hear that. Let me help you with that right away, our team is here for you.'

/**
 * The dashboard as a person uses it, in headless Chromium against the real build (`npm run build`, then
 * dist/all-in-one.js on a fresh DATA_DIR, as `npm start` runs it): sign up, create a chatbot and see its key
 * once, capture with that key, watch the conversation and its sentiment appear, filter, page, read
 * analytics, see the topics the language model finds and follow one to its conversations, rotate, delete,
 * sign out and in. Every page passes axe-core with no serious or critical violation, logs no error (a CSP
 * violation would), and is saved as a screenshot under .ci-artifacts/screenshots.
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser', () => {
  let app: BuiltApp
  let browser: Browser
  let page: Page
  let errors: string[]
  const email = `ada-${randomUUID().slice(0, 8)}@example.com`
  const password = 'correct horse battery staple'
  let apiKey = ''
  let chatbotId = ''

  beforeAll(async () => {
    await clearScreenshots()
    await buildApp()
    // The app analyses with the test model whatever the environment says, and never reaches for the hub.
    // Re-clustering (docs/analysis.md, Topics) runs seconds after a burst, not the default minute, so that the
    // topics step can wait for the topics to settle before it compares the page with the API.
    app = await startBuiltApp({
      ...(hasTestModel ? modelConfigEnv() : {}),
      TOPIC_RECLUSTER_MIN_INTERVAL_SECONDS: '2',
      TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS: '5',
    })
    browser = await launchChromium(CHROMIUM!)
    const context = await browser.newContext({
      baseURL: app.baseUrl,
      viewport: { width: 1280, height: 900 },
      reducedMotion: 'reduce',
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl })
    page = await context.newPage()
    page.setDefaultTimeout(20_000)
    // The app asks who is signed in on load (401 when nobody is) and the wrong-password step gets a 401.
    errors = collectPageErrors(page, (text) => text.includes('status of 401'))
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  /** Saves the page as `name`, then checks it with axe-core and that it logged no error. */
  async function checkPage(name: string, fullPage = true) {
    await screenshot(page, name, fullPage)
    const violations = await seriousAxeViolations(page)
    expect(violations, `${name}: ${JSON.stringify(violations, null, 2)}`).toEqual([])
    // Taken out as they are checked, so one step's error is reported by that step only.
    const logged = errors.splice(0)
    expect(logged, `${name}: ${logged.join('\n').slice(0, 2_000)}`).toEqual([])
  }

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name })
  const figure = (label: string) =>
    page
      .locator('dl.figures > div', { has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
      .locator('dd')
  const conversationLink = (id: string) => page.getByRole('link', { name: id, exact: true })

  async function capture(key: string, body: Record<string, unknown>) {
    const response = await fetch(`${app.baseUrl}/api/v1/capture`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

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
      const happy = await capture(apiKey, {
        conversationId: 'order-1001',
        messages: [
          { id: 'm-1', role: 'user', content: 'Thank you so much, this is wonderful and works great!' },
          { id: 'm-2', role: 'assistant', content: 'Happy to help!' },
        ],
        user: { id: 'u-1', name: 'Ada' },
      })
      expect(happy).toMatchObject({ status: 200, body: { ok: true, messagesStored: 2, warnings: [] } })
      const unhappy = await capture(apiKey, {
        conversationId: 'order-1002',
        messages: [
          { id: 'm-1', role: 'user', content: 'This is terrible. My refund never arrived and I am angry.' },
          { id: 'm-2', role: 'assistant', content: 'I am sorry about the refund delay.' },
        ],
        user: { id: 'u-2', name: 'Grace', email: 'grace@example.com' },
        session: { device: 'mobile' },
        custom: { plan: 'pro' },
      })
      // The custom field is in the schema set in the previous step: no warning.
      expect(unhappy).toMatchObject({ status: 200, body: { ok: true, messagesStored: 2, warnings: [] } })

      await checkPage('07-chatbot-receiving')
    },
    STEP_TIMEOUT,
  )

  it(
    'lists conversations with their sentiment, filters them, and shows new ones as they arrive',
    async () => {
      await page.getByRole('link', { name: 'Conversations', exact: true }).click()
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

      const live = await capture(apiKey, {
        conversationId: 'order-1003',
        messages: [{ id: 'm-1', role: 'user', content: 'Is there a discount for annual plans?' }],
      })
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

  it(
    'pages through conversations with the cursor',
    async () => {
      const bulk = Array.from({ length: 20 }, (_, i) =>
        capture(apiKey, {
          conversationId: `bulk-${String(i + 1).padStart(2, '0')}`,
          messages: [{ id: 'm-1', role: 'user', content: `Question number ${i + 1}` }],
        }),
      )
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
      await page.getByRole('link', { name: 'Conversations', exact: true }).click()
      await heading('Conversations').waitFor()
      const items = page.locator('.conversation-list > li')
      const older = page.getByRole('button', { name: 'Older' })
      await waitFor(async () => (await items.count()) === 20 && (await older.isEnabled()), {
        what: 'a full page',
      })
      await older.click()
      await page.getByText('Page 2').waitFor()
      await conversationLink('order-1001').waitFor()
      expect(await items.count()).toBe(4)
      expect(await older.isEnabled()).toBe(false)
      await page.getByRole('button', { name: 'Newer' }).click()
      await page.getByText('Page 1').waitFor()
      await conversationLink('bulk-20').waitFor()
    },
    STEP_TIMEOUT,
  )

  it.skipIf(!hasTestModel)(
    'ranks the topics end users ask about, with their numbers as a table, and links each to its conversations',
    async () => {
      const captured = new Map<string, string[]>()
      const internalIds: string[] = []
      for (const [request, texts] of Object.entries(REQUESTS)) {
        for (const [i, text] of texts.entries()) {
          const conversationId = `${request}-${i + 1}`
          const sent = await capture(apiKey, {
            conversationId,
            messages: [
              { id: 'q', role: 'user', content: text },
              { id: 'a', role: 'assistant', content: BOILERPLATE },
            ],
          })
          expect(sent.status).toBe(200)
          internalIds.push(String(sent.body.conversationId))
          captured.set(request, [...(captured.get(request) ?? []), conversationId])
        }
      }

      await page.getByRole('link', { name: 'Topics', exact: true }).click()
      await heading('Topics').waitFor()
      await page.getByLabel('Chatbot', { exact: true }).selectOption({ label: 'Support bot EU' })
      await page.getByRole('button', { name: 'Show', exact: true }).click()
      await waitFor(() => new URL(page.url()).searchParams.get('chatbotId') === chatbotId, {
        what: 'the chatbot chosen',
      })
      // Topics form as the analysis places the paraphrases (a conversation's topics come with its
      // sentiment, in one result): once every conversation has been analysed, they hold still.
      await waitFor(
        async () => {
          for (const id of internalIds) {
            const res = await page.request.get(`/api/v1/conversations/${id}`)
            if (!res.ok() || (await res.json()).conversation.sentiment === null) return false
          }
          return true
        },
        { timeoutMs: 90_000, what: 'every conversation analysed' },
      )
      // One paraphrase may wait in "other" when it does not lie inside the topic's spread yet (the
      // topics come from the data: docs/analysis.md, Topics).
      const topicsNow = async () =>
        (await (
          await page.request.get(`/api/v1/analytics/topics?chatbotId=${chatbotId}&days=90&interval=day`)
        ).json()) as {
          topics: { label: string; conversations: number }[]
          reclustering: { settling: boolean; lastReclusteredAt: string | null }
        }
      // Background re-clustering moves conversations between topics and "other" until it has run on
      // everything captured: the counts below are compared once it has settled.
      await waitFor(
        async () => {
          const { reclustering } = await topicsNow()
          return !reclustering.settling && reclustering.lastReclusteredAt !== null
        },
        { timeoutMs: 120_000, what: 'the topics settled (re-clustering run on every request)' },
      )
      // ... and the events of its last run projected: the same report twice, three seconds apart.
      let previous = ''
      await waitFor(
        async () => {
          const now = JSON.stringify(await topicsNow())
          const same = now === previous
          previous = now
          return same
        },
        { timeoutMs: 120_000, intervalMs: 3_000, what: 'the topics report unchanged for three seconds' },
      )
      // The password topic: the first (most conversations) whose label says so; another may too.
      const passwordNow = (await topicsNow()).topics.find((t) => /password/i.test(t.label))
      const inPasswordTopic = passwordNow?.conversations
      expect(inPasswordTopic).toBeGreaterThanOrEqual(4)
      const passwordCount = String(inPasswordTopic)
      // The page polls by itself.
      const ranked = page.locator('ol.topic-list > li')
      // Topics are grouped by theme (h3), each topic's heading an h4 under its theme's: "2. label".
      const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      const passwordItem = ranked.filter({
        has: page
          .locator('.topic-head')
          .getByRole('heading', { name: new RegExp(`^\\d+\\. ${escaped(passwordNow!.label)}$`) }),
      })
      const cardFigure = (item: typeof ranked, label: string) =>
        item
          .locator('.topic-figures > div', { has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
          .locator('dd')
      await waitFor(
        async () => (await cardFigure(passwordItem, 'Conversations').textContent()) === passwordCount,
        { timeoutMs: 90_000, what: `the password topic with its ${passwordCount} conversations` },
      )

      // The page ranks as the API does, most conversations first, "other" apart at the end.
      const url = new URL(page.url())
      const report = (await (
        await page.request.get(
          `/api/v1/analytics/topics?chatbotId=${chatbotId}&days=${url.searchParams.get('range')}&interval=day`,
        )
      ).json()) as {
        topics: { id: string; label: string; conversations: number; messages: number }[]
        themes: { id: string; label: string; conversations: number; topicIds: string[] }[]
        other: { conversations: number; messages: number } | null
      }
      await waitFor(async () => (await ranked.count()) === report.topics.length, {
        what: 'every topic listed',
      })
      // Grouped by theme, each topic keeps its rank: in rank order they are the API's.
      const byRank = (texts: string[]) =>
        [...texts].sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))
      const headings = byRank(await ranked.locator('.topic-head h4').allTextContents())
      expect(headings).toEqual(report.topics.map((t, i) => `${i + 1}. ${t.label}`))
      const counts = await ranked.evaluateAll((items) =>
        items
          .map((li) => [
            Number.parseInt(li.querySelector('.topic-head h4')?.textContent ?? '', 10),
            Number(li.querySelector('.topic-figures dd')?.textContent),
          ])
          .sort((a, b) => a[0]! - b[0]!)
          .map(([, n]) => n),
      )
      expect(counts).toEqual([...counts].sort((a, b) => b! - a!))
      // The themes' totals as a table, the API's; a theme leads to its conversations.
      expect(report.themes.length).toBeGreaterThanOrEqual(1)
      const themeTable = page.getByRole('region', { name: 'Themes (table)' })
      const themeRows = async () =>
        (
          await themeTable
            .locator('tbody tr')
            .evaluateAll((trs) =>
              trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent ?? '')),
            )
        ).map(([name, topics, conversations]) => [name, topics, conversations])
      const apiThemeRows = report.themes.map((t) => [
        t.label,
        String(t.topicIds.length),
        String(t.conversations),
      ])
      // The page polls by itself: it shows the report above once its next poll has come back.
      await waitFor(async () => JSON.stringify(await themeRows()) === JSON.stringify(apiThemeRows), {
        timeoutMs: 30_000,
        what: "the themes' table as the API reports it",
      }).catch(() => undefined)
      expect(await themeRows()).toEqual(apiThemeRows)
      const passwordTheme = report.themes.find((t) =>
        t.topicIds.some((id) => report.topics.find((x) => x.id === id && /password/i.test(x.label))),
      )!
      await page
        .getByRole('heading', {
          level: 3,
          name: new RegExp(`^${escaped(passwordTheme.label)} ·`),
        })
        .waitFor()
      const passwordTopic = report.topics.find((t) => /password/i.test(t.label))!
      expect(passwordTopic).toMatchObject({
        conversations: Number(passwordCount),
        messages: Number(passwordCount),
      })
      expect(await cardFigure(passwordItem, 'End-user messages').textContent()).toBe(passwordCount)
      // Each topic is the bot's users' words, never the boilerplate the bot says to everyone.
      for (const word of ['sorry', 'right away', 'team']) expect(headings.join(' ')).not.toContain(word)
      const examples = passwordItem.locator('.topic-examples > li')
      expect(await examples.count()).toBe(3)
      expect(await examples.first().locator('q').textContent()).toMatch(/password/i)

      // The same numbers as a table: a row per topic in rank order, "other" last.
      const ranking = page.locator('figure', { hasText: 'Conversations by topic' })
      await ranking.getByText('Show the numbers as a table').click()
      const rows = ranking.locator('tbody tr')
      const cells = await rows.evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent ?? '')),
      )
      const expected = [
        ...report.topics.map((t) => [t.label, String(t.conversations), String(t.messages)]),
        ...(report.other
          ? [['Other', String(report.other.conversations), String(report.other.messages)]]
          : []),
      ]
      expect(cells.map(([topic, conversations, , messages]) => [topic, conversations, messages])).toEqual(
        expected,
      )
      // The trend's table: the password topic's messages per day add up to its 5.
      const trend = page.locator('figure', { hasText: 'Top topics by day' })
      await trend.getByText('Show the numbers as a table').click()
      const perDay = await trend.locator('table').evaluate((table, label) => {
        const column = [...table.querySelectorAll('thead th')].findIndex((th) => th.textContent === label)
        return [...table.querySelectorAll('tbody tr')].map((tr) => Number(tr.children[column]?.textContent))
      }, passwordTopic.label)
      expect(perDay.reduce((sum, n) => sum + n, 0)).toBe(Number(passwordCount))
      await trend.getByText('Show the numbers as a table').click()
      await checkPage('10a-topics')

      // A topic's link lists its conversations, and only those.
      await passwordItem.getByRole('link', { name: `Conversations about ${passwordTopic.label}` }).click()
      await heading('Conversations').waitFor()
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({
        chatbotId,
        topic: passwordTopic.id,
      })
      const activeFilter = page.locator('.active-filter')
      await activeFilter.getByText(passwordTopic.label, { exact: true }).waitFor()
      await waitFor(
        async () => (await page.getByLabel('Topic', { exact: true }).inputValue()) === passwordTopic.label,
        {
          what: "the Topic box showing the topic's label rather than its id",
        },
      )
      const listed = async () =>
        (await page.locator('.conversation-list > li h3').allTextContents()).sort().join()
      const { conversations: inTopic } = (await (
        await page.request.get(`/api/v1/conversations?chatbotId=${chatbotId}&topic=${passwordTopic.id}`)
      ).json()) as { conversations: { conversationId: string }[] }
      const placed = inTopic.map((c) => c.conversationId).sort()
      expect(placed).toHaveLength(Number(passwordCount))
      for (const id of placed) expect(captured.get('password')).toContain(id)
      await waitFor(async () => (await listed()) === placed.join(), {
        what: 'only the password conversations listed',
      })
      await page
        .locator('.conversation-list > li')
        .first()
        .getByRole('link', { name: passwordTopic.label, exact: true })
        .waitFor()
      await checkPage('10b-conversations-by-topic')

      await page.getByRole('button', { name: 'Clear topic filter' }).click()
      await waitFor(() => !new URL(page.url()).searchParams.has('topic'), {
        what: 'the topic filter cleared',
      })
      await conversationLink('delivery-3').waitFor()
      expect(await activeFilter.count()).toBe(0)

      // The conversation list filters by theme: the theme's conversations, the API's.
      await page.getByLabel('Theme', { exact: true }).selectOption(passwordTheme.id)
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await activeFilter.getByText(passwordTheme.label, { exact: true }).waitFor()
      const { conversations: inTheme } = (await (
        await page.request.get(
          `/api/v1/conversations?chatbotId=${chatbotId}&theme=${passwordTheme.id}&limit=100`,
        )
      ).json()) as { conversations: { conversationId: string }[] }
      expect(inTheme.map((c) => c.conversationId)).toEqual(expect.arrayContaining(placed))
      const firstPage = inTheme
        .slice(0, 20)
        .map((c) => c.conversationId)
        .sort()
        .join()
      await waitFor(async () => (await listed()) === firstPage, { what: "the theme's conversations listed" })
      await page.getByRole('button', { name: 'Clear theme filter' }).click()
      await waitFor(() => !new URL(page.url()).searchParams.has('theme'), {
        what: 'the theme filter cleared',
      })
    },
    150_000,
  )

  it(
    'says how current the figures are: how far behind while projection and analysis are held up, then up to date',
    async () => {
      await page.getByRole('link', { name: 'Conversations', exact: true }).click()
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

  // Teams: Ada (the owner) invites an admin, a member and a viewer; each signs up through their link in a
  // browser of their own and sees the controls of their role, and no others.
  const team = {
    admin: {
      email: `grace-${randomUUID().slice(0, 8)}@example.com`,
      name: 'Grace',
      link: '',
      page: undefined as Page | undefined,
    },
    member: {
      email: `linus-${randomUUID().slice(0, 8)}@example.com`,
      name: 'Linus',
      link: '',
      page: undefined as Page | undefined,
    },
    viewer: {
      email: `vera-${randomUUID().slice(0, 8)}@example.com`,
      name: 'Vera',
      link: '',
      page: undefined as Page | undefined,
    },
  }
  type Person = keyof typeof team
  let teamBotId = ''
  const personErrors = new Map<Page, string[]>()

  /** A browser of a person's own (their own cookies), checked like the main one. */
  async function personPage(): Promise<Page> {
    const context = await browser.newContext({
      baseURL: app.baseUrl,
      viewport: { width: 1280, height: 900 },
      reducedMotion: 'reduce',
    })
    const other = await context.newPage()
    other.setDefaultTimeout(20_000)
    personErrors.set(
      other,
      collectPageErrors(other, (text) => text.includes('status of 401')),
    )
    return other
  }

  async function checkPersonPage(other: Page, name: string) {
    await screenshot(other, name)
    const violations = await seriousAxeViolations(other)
    expect(violations, `${name}: ${JSON.stringify(violations, null, 2)}`).toEqual([])
    expect(personErrors.get(other)!.splice(0), name).toEqual([])
  }

  const navLinks = async (p: Page) =>
    (await p.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).map((t) =>
      t.trim(),
    )

  it(
    'invites an admin, a member and a viewer from the Members page, each link shown once; revokes one',
    async () => {
      const created = await page.request.post('/api/v1/chatbots', { data: { name: 'Team bot' } })
      teamBotId = (await created.json()).chatbot.id
      await page.getByRole('link', { name: 'Members', exact: true }).click()
      await heading('Members').waitFor()
      await page.getByRole('rowheader', { name: 'Ada (you)' }).waitFor()

      for (const [role, person] of Object.entries(team)) {
        await page.getByLabel('Email', { exact: true }).fill(person.email)
        await page.getByLabel('Role', { exact: true }).selectOption(role)
        await page.getByRole('button', { name: 'Invite', exact: true }).click()
        const link = page.getByRole('textbox', { name: 'Invitation link' })
        await page.getByRole('heading', { name: `Invitation link for ${person.email}` }).waitFor()
        person.link = await link.inputValue()
        expect(person.link).toMatch(new RegExp(`^${app.baseUrl}/join#[0-9a-f-]{36}\\.[A-Za-z0-9_-]{43}$`))
        await page.getByText('this link is shown only once').waitFor()
        await page.getByRole('listitem').filter({ hasText: person.email }).waitFor()
      }
      await page.getByRole('button', { name: 'Copy link' }).click()
      await page.getByText('Copied', { exact: true }).waitFor()
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(team.viewer.link)
      await checkPage('16-members-owner')

      // A mistaken invitation is revoked from the pending list; its link then no longer opens.
      await page.getByLabel('Email', { exact: true }).fill('typo@example.con')
      await page.getByRole('button', { name: 'Invite', exact: true }).click()
      const typoLink = await page.getByRole('textbox', { name: 'Invitation link' }).inputValue()
      await page.getByRole('button', { name: 'Revoke the invitation of typo@example.con' }).click()
      await page.getByRole('listitem').filter({ hasText: 'typo@example.con' }).waitFor({ state: 'detached' })
      const lookup = await page.request.post('/api/v1/invitations/lookup', {
        data: { token: typoLink.slice(typoLink.indexOf('#') + 1) },
      })
      expect(lookup.status()).toBe(404)
    },
    STEP_TIMEOUT,
  )

  it(
    'signs each invited person up through their link, into the role they were given',
    async () => {
      for (const [role, person] of Object.entries(team) as [Person, (typeof team)[Person]][]) {
        const other = await personPage()
        person.page = other
        await other.goto(person.link)
        await other.getByRole('heading', { level: 1, name: 'Join Acme Support' }).waitFor()
        await other.getByText(`as ${role === 'admin' ? 'an' : 'a'} ${role}`).waitFor()
        expect(await other.getByLabel('Email', { exact: true }).inputValue()).toBe(person.email)
        if (role === 'admin') await checkPersonPage(other, '17-join')
        await other.getByLabel('Your name (optional)').fill(person.name)
        await other.getByLabel('Choose a password').fill(password)
        await other.getByRole('button', { name: 'Create account and join' }).click()
        await other
          .getByRole('heading', { level: 1, name: role === 'viewer' ? 'Conversations' : 'Chatbots' })
          .waitFor()
        await other
          .locator('#organization-switcher option:checked', { hasText: `Acme Support (${role})` })
          .waitFor({
            state: 'attached',
          })
        // The link worked once.
        const again = await other.request.post('/api/v1/invitations/lookup', {
          data: { token: person.link.slice(person.link.indexOf('#') + 1) },
        })
        expect(again.status()).toBe(404)
      }
      await page.reload()
      await heading('Members').waitFor()
      for (const person of Object.values(team))
        await page.getByRole('rowheader', { name: person.name }).waitFor()
      await page.getByText('No pending invitations.').waitFor()
    },
    STEP_TIMEOUT,
  )

  it(
    'shows an admin everything but what only owners may do',
    async () => {
      const admin = team.admin.page!
      expect(await navLinks(admin)).toEqual([
        'Chatbots',
        'Conversations',
        'Topics',
        'Analytics',
        'Members',
        'Audit log',
      ])
      await admin.getByLabel('Chatbot name', { exact: true }).waitFor()
      await admin.goto(`/chatbots/${teamBotId}`)
      await admin.getByRole('heading', { level: 1, name: 'Team bot' }).waitFor()
      for (const control of ['Rename', 'Save settings', 'Rotate key…', 'Delete chatbot…']) {
        await admin.getByRole('button', { name: control }).waitFor()
      }
      await admin.goto('/members')
      await admin.getByRole('heading', { level: 1, name: 'Members' }).waitFor()
      await admin.getByLabel('Email', { exact: true }).waitFor()
      // Admins give any role but owner, and cannot change or remove the owner.
      expect(await admin.getByLabel('Role', { exact: true }).locator('option').allTextContents()).toEqual([
        'admin',
        'member',
        'viewer',
      ])
      await admin.getByLabel(`Role of ${team.member.name}`).waitFor()
      expect(await admin.getByLabel('Role of Ada').count()).toBe(0)
      expect(await admin.getByRole('button', { name: 'Remove Ada' }).count()).toBe(0)
      expect(await admin.getByRole('button', { name: 'Delete organization…' }).count()).toBe(0)
      await checkPersonPage(admin, '18-members-admin')
      // The server decides all the same: an admin's attempt to demote the owner is refused.
      const ada = await (await page.request.get('/api/v1/auth/me')).json()
      const demote = await admin.request.patch(`/api/v1/members/${ada.user.id}`, { data: { role: 'member' } })
      expect(demote.status()).toBe(403)
    },
    STEP_TIMEOUT,
  )

  it(
    'shows a member the chatbots to rename and configure, but no keys, deletions, invitations or audit log',
    async () => {
      const member = team.member.page!
      expect(await navLinks(member)).toEqual(['Chatbots', 'Conversations', 'Topics', 'Analytics', 'Members'])
      expect(await member.getByLabel('Chatbot name', { exact: true }).count()).toBe(0)
      await member.getByText('Owners and admins add chatbots').waitFor()
      await member.goto(`/chatbots/${teamBotId}`)
      await member.getByRole('heading', { level: 1, name: 'Team bot' }).waitFor()
      await member.getByRole('button', { name: 'Rename' }).waitFor()
      await member.getByRole('button', { name: 'Save settings' }).waitFor()
      expect(await member.getByRole('button', { name: 'Rotate key…' }).count()).toBe(0)
      expect(await member.getByRole('button', { name: 'Delete chatbot…' }).count()).toBe(0)
      await checkPersonPage(member, '19-chatbot-member')
      await member.goto('/members')
      await member.getByRole('rowheader', { name: `${team.member.name} (you)` }).waitFor()
      expect(await member.getByLabel('Email', { exact: true }).count()).toBe(0)
      expect(await member.getByRole('combobox', { name: /^Role of/ }).count()).toBe(0)
      expect(await member.getByRole('heading', { name: 'Pending invitations' }).count()).toBe(0)
      await checkPersonPage(member, '20-members-member')
      await member.goto('/audit')
      await member.getByRole('heading', { level: 1, name: 'Not available to your role' }).waitFor()
      // The server decides all the same.
      expect((await member.request.post(`/api/v1/chatbots/${teamBotId}/rotate-key`)).status()).toBe(403)
      expect((await member.request.get('/api/v1/audit')).status()).toBe(403)
    },
    STEP_TIMEOUT,
  )

  it(
    'shows a viewer conversations and analytics only',
    async () => {
      const viewer = team.viewer.page!
      expect(await navLinks(viewer)).toEqual(['Conversations', 'Topics', 'Analytics', 'Members'])
      expect(await viewer.getByLabel('Chatbot', { exact: true }).count()).toBe(0)
      await viewer.getByLabel('Sentiment', { exact: true }).waitFor()
      await checkPersonPage(viewer, '21-conversations-viewer')
      await viewer.goto('/chatbots')
      await viewer.getByRole('heading', { level: 1, name: 'Not available to your role' }).waitFor()
      await viewer.goto('/members')
      await viewer.getByRole('heading', { level: 1, name: 'Members' }).waitFor()
      await viewer.getByRole('button', { name: 'Leave organization…' }).waitFor()
      expect(await viewer.getByRole('table').count()).toBe(0)
      await checkPersonPage(viewer, '22-members-viewer')
      expect((await viewer.request.get('/api/v1/chatbots')).status()).toBe(403)
    },
    STEP_TIMEOUT,
  )

  it(
    'lowers a role and removes a member: it applies to their very next page',
    async () => {
      // Ada makes Linus a viewer; his next page no longer has the chatbots.
      const linusRole = page.getByLabel(`Role of ${team.member.name}`)
      await linusRole.selectOption('viewer')
      await waitFor(
        async () => (await linusRole.inputValue()) === 'viewer' && (await linusRole.isEnabled()),
        {
          what: "Linus's new role saved",
        },
      )
      const member = team.member.page!
      await member.goto('/chatbots')
      await member.getByRole('heading', { level: 1, name: 'Not available to your role' }).waitFor()
      expect(await navLinks(member)).toEqual(['Conversations', 'Topics', 'Analytics', 'Members'])

      // Ada removes Vera, after confirming; Vera's next page says she belongs to no organization.
      await page.getByRole('button', { name: `Remove ${team.viewer.name}` }).click()
      const dialog = page.getByRole('dialog', { name: `Remove ${team.viewer.name}?` })
      await dialog.waitFor()
      await checkPage('23-remove-dialog', false)
      await dialog.getByRole('button', { name: 'Remove', exact: true }).click()
      await page.getByRole('rowheader', { name: team.viewer.name }).waitFor({ state: 'detached' })
      const viewer = team.viewer.page!
      await viewer.goto('/conversations')
      await viewer.getByRole('heading', { level: 1, name: 'No organization' }).waitFor()
      await viewer.getByText("You don't belong to any organization.").waitFor()
      await checkPersonPage(viewer, '24-no-organization')

      // She can still create one of her own, which she owns.
      await viewer.getByLabel('Organization name').fill("Vera's team")
      await viewer.getByRole('button', { name: 'Create organization' }).click()
      await viewer.getByRole('heading', { level: 1, name: 'Chatbots' }).waitFor()
      await viewer.getByLabel('Chatbot name', { exact: true }).waitFor()
    },
    STEP_TIMEOUT,
  )

  it(
    'switches organizations: each shows its own chatbots',
    async () => {
      // Grace, the admin, also creates an organization of her own, and is switched to it.
      const admin = team.admin.page!
      await admin.goto('/members')
      await admin.getByLabel('Organization name').fill('Grace Labs')
      await admin.getByRole('button', { name: 'Create organization' }).click()
      await admin.getByRole('heading', { level: 1, name: 'Chatbots' }).waitFor()
      await admin.getByText('No chatbots yet').waitFor()
      await checkPersonPage(admin, '25-switcher')

      // Switching back to Acme Support shows its chatbot again, as its admin.
      const switcher = admin.getByLabel('Organization', { exact: true })
      expect(await switcher.locator('option').allTextContents()).toEqual([
        'Acme Support (admin)',
        'Grace Labs (owner)',
      ])
      await switcher.selectOption({ label: 'Acme Support (admin)' })
      await admin.getByRole('link', { name: 'Team bot', exact: true }).waitFor()
      expect(await navLinks(admin)).toContain('Audit log')
    },
    STEP_TIMEOUT,
  )

  it(
    'shows the owner the audit log of who did what',
    async () => {
      await page.getByRole('link', { name: 'Audit log', exact: true }).click()
      await heading('Audit log').waitFor()
      const log = page.locator('ol.audit-list')
      await log.getByText(`removed ${team.viewer.email} (viewer)`).waitFor()
      await log.getByText(`changed the role of ${team.member.email} from member to viewer`).waitFor()
      await log.getByText(`invited ${team.admin.email} as admin`).waitFor()
      await log.getByText('joined as admin').waitFor()
      await log.getByText('revoked the invitation of typo@example.con').waitFor()
      await log.getByText('created the chatbot Team bot').waitFor()
      await log.getByText('rotated the API key of Support bot EU', { exact: false }).waitFor()
      await checkPage('26-audit-log')
    },
    STEP_TIMEOUT,
  )

  it(
    'lets a member leave, after confirming',
    async () => {
      const admin = team.admin.page!
      await admin.goto('/members')
      await admin.getByRole('button', { name: 'Leave organization…' }).click()
      const dialog = admin.getByRole('dialog', { name: 'Leave Acme Support?' })
      await dialog.getByRole('button', { name: 'Leave', exact: true }).click()
      // She is moved to the organization she still has.
      await admin.getByRole('heading', { level: 1, name: 'Chatbots' }).waitFor()
      expect(
        await admin.getByLabel('Organization', { exact: true }).locator('option').allTextContents(),
      ).toEqual(['Grace Labs (owner)'])
      await page.reload()
      await heading('Audit log').waitFor()
      await page.locator('ol.audit-list').getByText('left (was admin)').waitFor()
      for (const other of personErrors.keys()) await other.context().close()
      console.log(`dashboard screenshots: ${SCREENSHOT_DIR}`)
    },
    STEP_TIMEOUT,
  )
})
