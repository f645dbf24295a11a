import fc from 'fast-check'

/**
 * JSON text of `depth` objects nested in one another under `key`, 1 innermost: `{"a":{"a":1}}` for 2.
 * Built as text, because JSON.stringify of such a value runs out of stack a few thousand levels down.
 */
export function nestedJson(depth: number, key = 'a'): string {
  return `${`{"${key}":`.repeat(depth)}1${'}'.repeat(depth)}`
}

/**
 * Deeply nested JSON text for property tests (issue 16): 1 to 10,000 levels of objects and arrays, mixed
 * in a repeating pattern, around a leaf.
 */
export function deeplyNestedJson(): fc.Arbitrary<string> {
  return fc
    .record({
      depth: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 10_000 })),
      pattern: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
      key: fc.constantFrom('a', 'settings', 'user', '0', ''),
    })
    .map(({ depth, pattern, key }) => {
      const arrays = Array.from({ length: depth }, (_, i) => pattern[i % pattern.length]!)
      const open = arrays.map((isArray) => (isArray ? '[' : `{${JSON.stringify(key)}:`)).join('')
      const close = arrays
        .map((isArray) => (isArray ? ']' : '}'))
        .reverse()
        .join('')
      return `${open}1${close}`
    })
}
