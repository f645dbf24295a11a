import { describe, expect, it } from 'vitest'
import { loadAverages, machineLine } from './machine.ts'

describe("a bench's machine lines", () => {
  it('prints the three load averages to two decimals', () => {
    expect(loadAverages()).toMatch(/^\d+\.\d{2} \d+\.\d{2} \d+\.\d{2}$/)
  })

  it('names the cores, the CPU, the commit and the load in one line', () => {
    const line = machineLine({
      cores: 2,
      cpuModel: 'AMD EPYC',
      memoryGiB: 24,
      node: 'v20.20.2',
      date: '2026-12-02T12:00:00.000Z',
      commit: 'abc1234',
      loadAverage: 3.5,
    })
    expect(line).toBe('machine: 2 × AMD EPYC, 24 GiB, Node v20.20.2, commit abc1234, load average 3.5')
  })
})
