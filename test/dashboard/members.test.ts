import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { collectPageErrors, screenshot, seriousAxeViolations } from '../support/browser.ts'
import { CHROMIUM, PASSWORD, STEP_TIMEOUT, signUp, useDashboard } from '../support/dashboard.ts'
import { waitFor } from '../support/wait.ts'

/**
 * Members and roles, in headless Chromium against the built app (test/support/dashboard-global-setup.ts),
 * each person in a browser of their own: the owner invites an admin, a member and a viewer (reading each
 * link from the page) and revokes a mistaken invitation; each signs up through their link and sees their
 * role's navigation and controls and none other (and the server refuses what the page hides); the owner
 * lowers a role and removes someone, which applies at their next page (the removed one is told she
 * belongs to no organization and creates one); the admin creates an organization and switches between
 * the two; the owner reads the audit log (with the key rotation of her chatbot, Support bot EU); the
 * admin leaves.
 */
describe.skipIf(!CHROMIUM)('the dashboard in a browser: members and roles', () => {
  const dashboard = useDashboard()
  const { app, checkPage, heading } = dashboard
  let page: Page
  const password = PASSWORD
  const browser = () => dashboard.browser

  beforeAll(async () => {
    page = dashboard.page
    await signUp(page, { name: 'Ada', organizationName: 'Acme Support' })
    const created = await page.request.post('/api/v1/chatbots', { data: { name: 'Support bot EU' } })
    const rotated = await page.request.post(
      `/api/v1/chatbots/${(await created.json()).chatbot.id}/rotate-key`,
    )
    expect(rotated.ok(), await rotated.text()).toBe(true)
    await page.goto('/chatbots')
    await heading('Chatbots').waitFor()
  }, 120_000)

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
    const context = await browser().newContext({
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
        // The focus is taken to the link shown once (trial12: it appeared in silence).
        await waitFor(() => link.evaluate((el) => el.matches(':focus')), { what: 'the link focused' })
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
    'shows a member the chatbots to rename and configure, but no keys, deletions, analysis or retention switches, invitations or audit log',
    async () => {
      const member = team.member.page!
      expect(await navLinks(member)).toEqual(['Chatbots', 'Conversations', 'Topics', 'Analytics', 'Members'])
      expect(await member.getByLabel('Chatbot name', { exact: true }).count()).toBe(0)
      await member.getByText('Owners and admins add chatbots').waitFor()
      await member.goto(`/chatbots/${teamBotId}`)
      await member.getByRole('heading', { level: 1, name: 'Team bot' }).waitFor()
      await member.getByRole('button', { name: 'Rename' }).waitFor()
      await member.getByRole('button', { name: 'Save settings' }).waitFor()
      // The chatbot's own topics are for those who manage topics (the server refuses a member them too).
      expect(await member.getByRole('group', { name: 'Topics' }).count()).toBe(0)
      // Analysis and retention (which stop or erase data) are shown, not offered.
      await member.getByText('Owners and admins change analysis and retention.').waitFor()
      expect(await member.getByLabel('Keep conversations for (days)').count()).toBe(0)
      expect(await member.getByLabel('Analyse new messages (sentiment and topics)').count()).toBe(0)
      const retention = await member.request.patch(`/api/v1/chatbots/${teamBotId}`, {
        data: { settings: { retentionDays: 1 } },
      })
      expect(retention.status()).toBe(403)
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

      // A link naming a chatbot (a topic's, say): with no chatbot list to choose from, the form says the
      // figures are one chatbot's, and "Show all chatbots" drops it from the address.
      await viewer.goto(`/analytics?chatbotId=${teamBotId}&range=30`)
      const only = viewer.getByRole('group', { name: 'Chatbot' })
      await only.getByText('One chatbot only, from the link you followed.').waitFor()
      await only.getByRole('button', { name: 'Show all chatbots' }).click()
      await waitFor(async () => !new URL(viewer.url()).searchParams.has('chatbotId'), {
        what: 'the chatbot dropped from the address',
      })
      expect(await viewer.getByRole('group', { name: 'Chatbot' }).count()).toBe(0)
      await viewer.getByRole('heading', { level: 2, name: 'Overview' }).waitFor()
    },
    STEP_TIMEOUT,
  )

  it(
    'lowers a role and removes a member: it applies to their very next page',
    async () => {
      // Ada makes Linus a viewer; his next page no longer has the chatbots.
      const linusRole = page.getByLabel(`Role of ${team.member.name}`)
      // Keyboard users arrow through the list to hear its options: that only picks (trial12).
      await linusRole.focus()
      await page.keyboard.press('ArrowUp')
      await page.keyboard.press('ArrowDown')
      await linusRole.selectOption('viewer')
      const roleOf = async (email: string) =>
        (
          (await (await page.request.get('/api/v1/members')).json()) as {
            members: { email: string; role: string }[]
          }
        ).members.find((m) => m.email === email)?.role
      expect(await roleOf(team.member.email)).toBe('member')
      await page.getByRole('button', { name: 'Change role' }).click()
      await page.getByRole('status').getByText(`Role of ${team.member.name} changed to viewer.`).waitFor()
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
      // Picking in the list does not switch (trial12: arrowing through it switched at every step); Switch does.
      await switcher.selectOption({ label: 'Acme Support (admin)' })
      await admin.getByText('No chatbots yet').waitFor()
      await admin.getByRole('button', { name: 'Switch', exact: true }).click()
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
    },
    STEP_TIMEOUT,
  )
})
