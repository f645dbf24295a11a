import { describe, expect, it } from 'vitest'
import { clauseAsks, type GateAnchors, requestEmbeddings } from './requests.ts'
import { isSocialFormula } from './social-formulas.ts'
import { normalized } from './vectors.ts'

describe("another language's social formulae, read from the grammar", () => {
  it('reads thanks, greetings, farewells and "that is all" of other languages, with the words beside them', () => {
    for (const text of [
      'muchas gracias, eso es todo',
      "danke, das war's",
      'alles klar, danke',
      'merci pour votre aide',
      'grazie, buona giornata',
      'obrigada, tenha um bom dia',
      'dank je wel',
      'Muy bien, muchas gracias!',
    ])
      expect(isSocialFormula(text), text).toBe(true)
  })

  it('reads no formula in a text with a word of anything else, an English one, or no thanks or greeting', () => {
    for (const text of [
      'gracias, pero mi tarjeta no funciona',
      'gracias por la ayuda con mi pedido',
      'Gracias Lucía',
      'danke, wo ist mein Paket?',
      'thanks',
      'ok',
      'alles klar',
      'perfecto',
      'Ok obrigada, please before Thursday',
      '',
    ])
      expect(isSocialFormula(text), text).toBe(false)
  })
})

describe('the topic gate with the social formulae', () => {
  // A model of two dimensions: the social anchor, the request anchor. Every text reads as a request to it, as a
  // Spanish or German thanks reads to the English model (bench/FINDINGS.md, topics21).
  const anchors: GateAnchors = {
    social: [normalized(Float32Array.from([1, 0]))],
    request: [normalized(Float32Array.from([0, 1]))],
    otherRequest: [],
  }
  const asRequest = normalized(Float32Array.from([0.1, 1]))
  const embed = async (texts: readonly string[]) => texts.map(() => asRequest)

  it('places no message made of formulae only, and still places a request beside one', async () => {
    // Regression (issue 31 item 4, lang2): trial6's Spanish thanks ("Perfecto, muchas gracias") made a topic.
    const texts = ['Perfecto, muchas gracias', 'gracias, pero mi tarjeta no funciona']
    const placed = await requestEmbeddings(texts, await embed(texts), anchors, embed)
    expect(placed.map((p) => p !== undefined)).toEqual([false, true])
    const without = await requestEmbeddings(
      texts,
      await embed(texts),
      anchors,
      embed,
      undefined,
      undefined,
      () => false,
    )
    expect(without.map((p) => p !== undefined)).toEqual([true, true])
  })

  it('counts a formula clause as asking nothing, and the other clauses as the model reads them', async () => {
    const least = await clauseAsks(
      ['Ok. I think about it. Gracias', 'Gracias', 'Gracias, wo ist mein Paket'],
      anchors,
      embed,
    )
    const asks = (await clauseAsks(['wo ist mein Paket'], anchors, embed))[0]
    // Of a text of one clause nothing is returned unless it asks nothing.
    expect(least).toEqual([expect.any(Number), Infinity, expect.any(Number)])
    expect(least[0]).toBeLessThan(0)
    const without = await clauseAsks(['Gracias'], anchors, embed, -Infinity, undefined, () => false)
    expect(without).toEqual([undefined])
    expect(asks).toBeUndefined()
  })
})
