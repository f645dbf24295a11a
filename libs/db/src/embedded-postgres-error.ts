/**
 * The embedded Postgres cannot start for a reason the operator can fix. Its message is one line saying
 * why and what to do: the service prints it as it is and exits, without a stack trace.
 */
export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'EmbeddedPostgresError'
  }
}
