/** The samples of one metric in a Prometheus scrape, as label string → value. */
export function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>()
  for (const line of text.split('\n')) {
    const match = line.match(/^([a-z_]+)(\{[^}]*\})? (\S+)$/)
    if (match?.[1] === name) found.set(match[2] ?? '', Number(match[3]))
  }
  return found
}
