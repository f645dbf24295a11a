/**
 * SQL for a UUID derived from text (the same text, the same UUID), shaped as version 4: the API and the
 * event schemas accept RFC 9562 UUIDs only, which a bare md5(…)::uuid is not.
 */
export const uuidFrom = (text: string) =>
  `overlay(overlay(md5(${text}) placing '4' from 13) placing '8' from 17)::uuid`
