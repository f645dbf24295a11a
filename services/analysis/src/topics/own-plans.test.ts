import { describe, expect, it } from 'vitest'
import { ownPlanClausesOf } from './own-plans.ts'
import { clauseAsks } from './requests.ts'
import { normalized } from './vectors.ts'

const plansIn = (text: string) => [...ownPlanClausesOf(text)]

describe("the end user's own plan to reach someone another way, read from the grammar", () => {
  it('reads a clause that opens with the end user reaching someone or going there as a plan', () => {
    expect(plansIn("whatever, I'll call")).toEqual(["I'll call"])
    expect(plansIn("I'll just phone the branch tomorrow")).toEqual(["I'll just phone the branch tomorrow"])
    expect(plansIn('ok ill ring the depot')).toEqual(['ok ill ring the depot'])
    expect(plansIn('right. emailing him now')).toEqual(['emailing him now'])
    expect(plansIn("I'm going to give them a ring")).toEqual(["I'm going to give them a ring"])
    expect(plansIn('will pop into the hall on saturday')).toEqual(['will pop into the hall on saturday'])
    expect(plansIn('I’ll call you back later. thanks')).toEqual(['I’ll call you back later'])
  })

  it('reads no plan in a request to be contacted or put through, whoever acts', () => {
    for (const text of [
      'can someone call me',
      'can someone just ring me? easier',
      'then get him to ring me. today.',
      "I'd like the bursar to call me, please",
      'I want to speak to a person',
      "I'll need someone to call me back",
      "I'll wait for someone to ring me",
      "I'll call, is that ok?",
      "please, I'll call if you give me the number",
      'can you call them for me',
    ])
      expect(plansIn(text), text).toEqual([])
  })

  it('reads no plan where the future is not a plan to reach someone', () => {
    for (const text of [
      "i'm going to need an uber for 4 people",
      "I'm going to be filing a life insurance claim.",
      "let my bank know i'm going to be in russia",
      'im going to call you xander',
      "i'm going to start calling you joe",
      "flip a coin i'm calling heads",
      "I'll pay by card",
    ])
      expect(plansIn(text), text).toEqual([])
  })

  it("reads a clause that opens with the end user's own attempt, wait, inquiry or thought in the future as a plan", () => {
    expect(plansIn("I'll try the app")).toEqual(["I'll try the app"])
    expect(plansIn("I'll just do it in the branch")).toEqual(["I'll just do it in the branch"])
    expect(plansIn("ok I'll wait")).toEqual(["ok I'll wait"])
    expect(plansIn("I'll check with my bank")).toEqual(["I'll check with my bank"])
    expect(plansIn("I'll have a look myself")).toEqual(["I'll have a look myself"])
    expect(plansIn("ok thanks, I'll ask our admin")).toEqual(["I'll ask our admin"])
    expect(plansIn('ok will do')).toEqual(['ok will do'])
    expect(plansIn('thanks I’ll think about it. bye')).toEqual(['thanks I’ll think about it'])
  })

  it('reads no plan where the end user needs, is, or does what the bot may do, or another is to act', () => {
    for (const text of [
      "i'll need a reminder",
      "I'll be travelling to Spain next week",
      "i'll have to cancel my reservation for tonight",
      'i will rollover my 401k',
      "I'll have the chicken",
      "I'll check in at 3pm",
      "I'm trying to log in",
      "I'll wait for you to send it",
      "I'll wait for someone to ring me",
      "I'll ask for a refund",
      "I'll ask them for a manager",
      "I'll ask you again: where is my parcel",
      "I'll check with you tomorrow",
      "I'll try the app, can you send me the link",
      "I'll try it if you tell me how?",
      'will check it for me',
    ])
      expect(plansIn(text), text).toEqual([])
  })

  it('makes the gate count a plan clause as asking in none, and keep a message that asks in another', async () => {
    // Regression (issue 31 item 4): "whatever, I'll call" after a request made a topic (margin −0.032).
    const unit = (...v: number[]) => normalized(Float32Array.from(v))
    const vectors: Record<string, Float32Array> = {
      whatever: unit(1, 0, 0),
      "I'll call": unit(0, 1, 0),
      "I'll call them": unit(0, 1, 0),
      "what's their number": unit(0, 1, 0),
    }
    const gate = { social: [unit(1, 0, 0)], request: [unit(0, 1, 0)], otherRequest: [] }
    const texts = [
      "whatever, I'll call",
      "I'll just phone the branch tomorrow",
      "I'll call them. what's their number",
    ]
    const embed = async (t: readonly string[]) => t.map((x) => vectors[x]!)
    const without = await clauseAsks(texts, gate, embed)
    const withPlans = await clauseAsks(texts, gate, embed, -Infinity, ownPlanClausesOf)
    expect(without[0]).toBeCloseTo(-1)
    expect(without[1]).toBeUndefined()
    expect(withPlans[0]).toBe(Infinity)
    expect(withPlans[1]).toBe(Infinity)
    expect(withPlans[2]).toBeCloseTo(-1)
  })

  it('reads a message over 300 characters for plans too, sentence by sentence', async () => {
    // Regression (issue 31 item 4, review6): a message over 300 characters was one clause (clausesOf), and its plan,
    // read by sentence, matched none: it asked by its whole however much of it was the end user's plan.
    const unit = (...v: number[]) => normalized(Float32Array.from(v))
    const thanks = 'Thank you so much for all the explanations about the delivery windows and the depot.'
    const text = `${thanks} ${thanks} ${thanks} ${thanks} I'll check with my bank tomorrow.`
    expect(text.length).toBeGreaterThan(300)
    expect(plansIn(text)).toEqual(["I'll check with my bank tomorrow"])
    const vectors: Record<string, Float32Array> = {
      'Thank you so much for all the explanations about the delivery windows and the depot': unit(1, 0, 0),
      "I'll check with my bank tomorrow": unit(0, 1, 0),
    }
    const gate = { social: [unit(1, 0, 0)], request: [unit(0, 1, 0)], otherRequest: [] }
    const embed = async (t: readonly string[]) => t.map((x) => vectors[x]!)
    expect(await clauseAsks([text], gate, embed, -Infinity, ownPlanClausesOf)).toEqual([Infinity])
    expect((await clauseAsks([text], gate, embed))[0]).toBeCloseTo(-1)
  })
})
