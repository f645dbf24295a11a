import type { Group } from './group.ts'

function row(cells: readonly string[], widths: readonly number[]): string {
  return `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
}

/** A Markdown table padded as Biome formats it (docs/configuration.md is checked by `npm run lint`). */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => r[i]!.length)))
  return [
    row(header, widths),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...rows.map((r) => row(r, widths)),
  ].join('\n')
}

const code = (text: string) => (text.startsWith('`') ? text : `\`${text}\``)
const PLAIN_DEFAULTS = new Set(['unset', 'empty', 'derived', 'generated'])

/**
 * docs/configuration.md's tables: one per concern, each variable with its default (and unit), its
 * meaning, and the processes that read it (from the groups each service parses).
 */
export function configTables(
  groups: readonly Group[],
  services: Readonly<Record<string, readonly Group[]>>,
): string {
  return groups
    .map((g) => {
      const readers = Object.entries(services)
        .filter(([, used]) => used.includes(g))
        .map(([name]) => name)
      const rows = Object.entries(g.variables).map(([name, v]) => {
        const value = PLAIN_DEFAULTS.has(v.default) ? v.default : code(v.default)
        return [code(name), v.unit ? `${value} ${v.unit}` : value, v.meaning]
      })
      return `**${g.title}** (${readers.join(', ')}). ${g.about}\n\n${table(['Variable', 'Default', 'Meaning'], rows)}`
    })
    .join('\n\n')
}

/** `text` with what lies between the two marker lines replaced by `content`. */
export function replaceBetweenMarkers(text: string, begin: string, end: string, content: string): string {
  const from = text.indexOf(begin)
  const to = text.indexOf(end)
  if (from < 0 || to < from) throw new Error(`the markers ${begin} … ${end} are missing`)
  return `${text.slice(0, from + begin.length)}\n\n${content}\n\n${text.slice(to)}`
}
