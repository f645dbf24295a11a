import { describe, expect, it } from 'vitest'
import * as server from '../../../gateway/src/auth/passwords.ts'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_RULES } from './password-rules.ts'

describe('the password rules the sign-up and join pages state', () => {
  it("are the server's", () => {
    expect(PASSWORD_MIN_LENGTH).toBe(server.PASSWORD_MIN_LENGTH)
    expect(PASSWORD_MAX_LENGTH).toBe(server.PASSWORD_MAX_LENGTH)
    expect(PASSWORD_RULES).toMatch(/^At least 10 characters/)
  })
})
