/** Relative links in Markdown, checked as GitHub renders them (test/docs-links.test.ts). */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The text outside fenced code blocks, line by line (a link or heading in a code block is not one). */
function prose(markdown: string): string[] {
  let fence: string | undefined
  const lines: string[] = []
  for (const line of markdown.split('\n')) {
    const opening = /^\s*(```|~~~)/.exec(line)?.[1]
    if (opening && (fence === undefined || fence === opening)) {
      fence = fence === undefined ? opening : undefined
      continue
    }
    if (fence === undefined) lines.push(line)
  }
  return lines
}

/** GitHub's anchor for each heading of a Markdown text. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    result.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return result
}

/** The relative links of a Markdown file (`file`, holding `markdown`) that lead nowhere, as `target (why)`. */
export function brokenLinks(file: string, markdown: string): string[] {
  const broken: string[] = []
  for (const line of prose(markdown)) {
    const withoutCode = line.replace(/`[^`]*`/g, '``')
    for (const [, target] of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue // http:, https:, mailto:
      const [path, anchor] = target!.split('#', 2) as [string, string | undefined]
      const into = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
      if (path !== '' && !existsSync(into)) {
        broken.push(`${target} (no file ${relative(root, into)})`)
        continue
      }
      if (anchor === undefined || !into.endsWith('.md') || (path !== '' && statSync(into).isDirectory()))
        continue
      const headings = anchors(path === '' ? markdown : readFileSync(into, 'utf8'))
      if (!headings.has(decodeURIComponent(anchor).toLowerCase())) {
        broken.push(`${target} (no heading #${anchor} in ${relative(root, into)})`)
      }
    }
  }
  return broken
}
