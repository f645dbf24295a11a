const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Path ids are checked by hand: a malformed id is answered like an unknown one (404, API.md). */
export function isUuid(value: string): boolean {
  return UUID.test(value)
}
