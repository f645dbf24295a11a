/**
 * The password rules the server enforces when a password is chosen (sign-up, joining by invitation):
 * services/gateway/src/auth/passwords.ts, which the test beside this file compares with these. Stated
 * under the password field before anything is submitted, and given to the browser's own check.
 */
export const PASSWORD_MIN_LENGTH = 10
export const PASSWORD_MAX_LENGTH = 1024

export const PASSWORD_RULES = `At least ${PASSWORD_MIN_LENGTH} characters (at most ${PASSWORD_MAX_LENGTH}); spaces count, so a phrase of a few words works well.`
