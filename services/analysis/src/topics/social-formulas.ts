/**
 * Social formulae of other languages than English (issue 31 item 4, topics21): thanks, greetings, farewells and
 * "that is all", the closed class each language says them with ("muchas gracias, eso es todo", "danke, das war's",
 * "merci, bonne journée"). The request gate reads them with the sentence model, which was trained on English: it
 * reads a Spanish or German thanks as unlike its social anchors, so as a request, and a chatbot's thanks formed a
 * topic ("gracias, perfecto, genial", bench/FINDINGS.md, lang2). The message's detected language cannot say when to
 * read them otherwise: under 20 characters it is undetermined (language.ts), and most thanks are shorter. So a
 * clause is read against these formulae whatever its detected language: none of their words is an English word a
 * request is made of, and a clause is one only when every word of it is of this class and one of them thanks,
 * greets or closes. A word of anything else ("gracias, pero mi tarjeta no funciona": its second clause) leaves the
 * clause to the model, so the doubt still goes to keeping a topic. Written from the languages' grammar of
 * politeness for the languages the stop-word lists of the terms cover best (Spanish, German, French, Italian,
 * Portuguese, Dutch), not from a data set; measured by bench/other-languages.ts.
 */

/** Per language: the formulae that thank, greet or close (one or more words), and the words that may stand beside them. */
const FORMULAE: Readonly<
  Record<string, { readonly heads: readonly string[]; readonly beside: readonly string[] }>
> = {
  es: {
    heads: [
      'gracias',
      'muchas gracias',
      'muchísimas gracias',
      'mil gracias',
      'hola',
      'buenas',
      'buenos días',
      'buenas tardes',
      'buenas noches',
      'adiós',
      'hasta luego',
      'hasta pronto',
      'chao',
      'eso es todo',
      'es todo',
      'nada más',
      'muy amable',
      'que tengas un buen día',
      'que tenga un buen día',
      'buen día',
    ],
    beside: [
      'vale',
      'perfecto',
      'genial',
      'estupendo',
      'bueno',
      'bien',
      'muy',
      'de',
      'acuerdo',
      'nuevo',
      'por',
      'la',
      'tu',
      'su',
      'ayuda',
      'todo',
      'sí',
      'pues',
      'igualmente',
    ],
  },
  de: {
    heads: [
      'danke',
      'danke schön',
      'dankeschön',
      'vielen dank',
      'besten dank',
      'herzlichen dank',
      'hallo',
      'guten morgen',
      'guten tag',
      'guten abend',
      'tschüss',
      'tschüs',
      'auf wiedersehen',
      'servus',
      'moin',
      "das war's",
      'das wars',
      'das war alles',
      'das ist alles',
      'schönen tag noch',
      'einen schönen tag noch',
    ],
    beside: [
      'alles',
      'klar',
      'gut',
      'prima',
      'toll',
      'perfekt',
      'ja',
      'sehr',
      'vielmals',
      'für',
      'die',
      'ihre',
      'deine',
      'hilfe',
      'nochmal',
      'noch',
    ],
  },
  fr: {
    heads: [
      'merci',
      'merci beaucoup',
      'merci bien',
      'bonjour',
      'bonsoir',
      'salut',
      'au revoir',
      'à bientôt',
      'bonne journée',
      'bonne soirée',
      "c'est tout",
      'ce sera tout',
    ],
    beside: [
      "d'accord",
      'parfait',
      'génial',
      'très',
      'bien',
      'beaucoup',
      'pour',
      'votre',
      'ton',
      'ta',
      "l'aide",
      'aide',
      'oui',
      'encore',
      'mille',
    ],
  },
  it: {
    heads: [
      'grazie',
      'grazie mille',
      'grazie tante',
      'ciao',
      'buongiorno',
      'buonasera',
      'arrivederci',
      'a presto',
      'buona giornata',
      'buona serata',
      'è tutto',
      'tutto qui',
    ],
    beside: [
      'va',
      'bene',
      'perfetto',
      'ottimo',
      'benissimo',
      'molto',
      'mille',
      'tante',
      'per',
      "l'aiuto",
      'aiuto',
      'sì',
      'gentilissimo',
      'gentile',
      'ancora',
    ],
  },
  pt: {
    heads: [
      'obrigado',
      'obrigada',
      'muito obrigado',
      'muito obrigada',
      'valeu',
      'olá',
      'bom dia',
      'boa tarde',
      'boa noite',
      'tchau',
      'até logo',
      'até mais',
      'é só isso',
      'só isso',
      'tenha um bom dia',
    ],
    beside: ['beleza', 'perfeito', 'ótimo', 'muito', 'pela', 'ajuda', 'sim', 'tá', 'certo'],
  },
  nl: {
    heads: [
      'bedankt',
      'dank je',
      'dank je wel',
      'dank u',
      'dank u wel',
      'hoi',
      'goedemorgen',
      'goedemiddag',
      'doei',
      'tot ziens',
      'dat was het',
      'fijne dag',
    ],
    beside: ['oké', 'prima', 'top', 'heel', 'erg', 'hartelijk', 'voor', 'de', 'hulp', 'ja'],
  },
}
/** Words any of them may stand beside: an acknowledgement said in English in every language. */
const SHARED_BESIDE = ['ok', 'okay', 'super']

const HEADS: readonly (readonly string[])[] = Object.values(FORMULAE)
  .flatMap((l) => l.heads)
  .map((h) => h.split(' '))
  .sort((a, b) => b.length - a.length)
const BESIDE = new Set([...Object.values(FORMULAE).flatMap((l) => l.beside), ...SHARED_BESIDE])

function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[‘’ʼ]/gu, "'")
    .split(/[^\p{L}']+/u)
    .map((w) => w.replace(/^'+|'+$/gu, ''))
    .filter((w) => w !== '')
}

/**
 * Whether a clause (requests.ts clausesOf) is a social formula of another language: every word a formula's or one that
 * may stand beside it, and at least one formula ("muchas gracias", "ok danke", "merci pour votre aide"). A clause
 * with a word of anything else, a name among them ("Gracias Lucía"), is not one.
 */
export function isSocialFormula(clause: string): boolean {
  const words = wordsOf(clause)
  let heads = 0
  for (let i = 0; i < words.length; ) {
    const head = HEADS.find((h) => h.every((w, k) => words[i + k] === w))
    if (head) {
      heads++
      i += head.length
    } else if (BESIDE.has(words[i]!)) i++
    else return false
  }
  return heads > 0
}
