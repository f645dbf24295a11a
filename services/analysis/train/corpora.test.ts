import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { supportEscalation, supportFrustration, supportHandover } from './corpora.ts'

describe('the labelled support texts', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'corpora-'))
  const file = (name: string, lines: string[]) => {
    const at = path.join(dir, name)
    writeFileSync(at, `${lines.join('\n')}\n\n`)
    return at
  }

  it('are read line by line with their label and kind, blank lines skipped', () => {
    const lines = [
      JSON.stringify({ text: 'a person please', escalation: true, kind: 'blunt' }),
      JSON.stringify({ text: 'where is my parcel', escalation: false, kind: 'request' }),
    ]
    expect(supportEscalation(file('escalation.jsonl', lines))).toEqual([
      { text: 'a person please', escalation: true, kind: 'blunt' },
      { text: 'where is my parcel', escalation: false, kind: 'request' },
    ])
  })

  it("stop at a line without its file's label, naming the line", () => {
    const lines = [
      JSON.stringify({ text: 'ok', handover: false, kind: 'social' }),
      JSON.stringify({ text: 'connecting you now', escalation: true, kind: 'transfer' }),
    ]
    expect(() => supportHandover(file('handover.jsonl', lines))).toThrow(
      'handover.jsonl: line 2 needs a text, handover (true or false) and a kind',
    )
    expect(() =>
      supportFrustration(
        file('frustration.jsonl', [JSON.stringify({ text: 'awful', frustrated: 'yes', kind: 'x' })]),
      ),
    ).toThrow('frustration.jsonl: line 1 needs a text, frustrated (true or false) and a kind')
  })

  it('of the repository all read', () => {
    expect(supportFrustration().length).toBeGreaterThan(500)
    expect(supportEscalation().length).toBeGreaterThan(500)
    expect(supportHandover().length).toBeGreaterThan(200)
  })

  it('of the handover head hold no text twice, whatever its case (its third round added 116 lines, signals-v30)', () => {
    const texts = supportHandover().map((e) => e.text.toLowerCase())
    expect(texts.length).toBe(395)
    expect(new Set(texts).size).toBe(texts.length)
    expect(supportHandover().filter((e) => e.handover).length).toBe(174)
  })
})
