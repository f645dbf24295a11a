import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import axe from 'axe-core'
import { type Browser, chromium, type Page } from 'playwright-core'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** Where each run leaves its screenshots (git-ignored; CI keeps .ci-artifacts/). */
export const SCREENSHOT_DIR = path.join(ROOT, '.ci-artifacts', 'screenshots')

/**
 * The system's Chromium (Debian's `chromium` package; CHROMIUM_PATH to use another), or null. The
 * browser tests never download a browser: playwright-core drives the one installed.
 */
export function findChromium(): string | null {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']
  return candidates.find((p): p is string => Boolean(p && existsSync(p))) ?? null
}

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true })
}

/** Empties SCREENSHOT_DIR, so that what is left there after a run is that run's. */
export async function clearScreenshots(): Promise<void> {
  await rm(SCREENSHOT_DIR, { recursive: true, force: true })
}

/** Saves a screenshot as SCREENSHOT_DIR/<name>.png: the whole page, or what is in view (for dialogs). */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage })
}

export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly targets: string[]
}

/**
 * Runs axe-core (WCAG 2.x A/AA and best practices) on the page as it is now and returns the violations
 * of serious or critical impact, each with the elements it found them on.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, not a <script>: the page's CSP rightly refuses inline scripts.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(axe.source)
  const violations = (await page.evaluate(`window.axe
    .run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    })))`)) as AxeViolation[]
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}

/** True when the page is wider than the viewport (it would scroll sideways on a phone). */
export function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate(
    'document.documentElement.scrollWidth > document.documentElement.clientWidth',
  ) as Promise<boolean>
}

/**
 * Collects what the page reports as errors: uncaught exceptions and console errors (a blocked script or
 * style under the CSP shows up here). `expected` filters out the ones a test causes on purpose.
 */
export function collectPageErrors(page: Page, expected: (text: string) => boolean = () => false): string[] {
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error' && !expected(message.text())) errors.push(`console: ${message.text()}`)
  })
  return errors
}
