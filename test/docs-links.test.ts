/**
 * Every relative link in README.md and docs/*.md points at a file that exists, and, when it names an
 * anchor (`#section`), at a heading of that Markdown file (GitHub's anchors: lower case, punctuation
 * dropped, spaces as hyphens, repeats numbered).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { anchors, brokenLinks } from './support/markdown-links.ts'

const root = fileURLToPath(new URL('..', import.meta.url))
const docs = join(root, 'docs')
const files = [
  join(root, 'README.md'),
  ...readdirSync(docs)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(docs, f)),
]

describe('relative links in README.md and docs/', () => {
  it.each(files.map((f) => [relative(root, f), f]))('%s: every one resolves', (_name, file) => {
    expect(brokenLinks(file, readFileSync(file, 'utf8'))).toEqual([])
  })

  it('are checked: a missing file, a missing heading and a link in code are told apart', () => {
    const file = join(docs, 'example.md')
    const text = [
      '# Example',
      '## The event log',
      'See [here](#the-event-log), [there](operations.md#metrics), [gone](nowhere.md),',
      '[no heading](#no-such-heading) and [no heading there](operations.md#no-such-heading).',
      '```',
      '[in code](nowhere-either.md)',
      '```',
    ].join('\n')
    expect(brokenLinks(file, text)).toEqual([
      'nowhere.md (no file docs/nowhere.md)',
      '#no-such-heading (no heading #no-such-heading in docs/example.md)',
      'operations.md#no-such-heading (no heading #no-such-heading in docs/operations.md)',
    ])
  })

  it('names headings as GitHub does', () => {
    expect([
      ...anchors('## Sign-in, organizations and roles\n## `GET /api/v1/status`\n## Tests\n## Tests'),
    ]).toEqual(['sign-in-organizations-and-roles', 'get-apiv1status', 'tests', 'tests-1'])
  })
})
