import { type GroupCommitOptions, GroupCommitter } from '@cas/db'
import { AppError } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import type pg from 'pg'
import { type CaptureRequest, type CaptureResult, captureGroup } from './capture.ts'

export type { GroupCommitOptions }

/**
 * Group commit of concurrent captures (libs/db GroupCommitter): the captures that arrive while the
 * capture transactions are busy share the next one, and each is answered once it committed, so a 200
 * still means durable. A conversation (by the id sent) is in one running transaction at most, so its
 * captures commit in the order they arrived. A capture whose key is gone gets its 401 alone.
 */
export class CaptureCommitter {
  private readonly committer: GroupCommitter<CaptureRequest, CaptureResult>

  constructor(pool: pg.Pool, keyring: Keyring, now: () => Date, opts: GroupCommitOptions) {
    this.committer = new GroupCommitter(
      pool,
      {
        // A capture of another chatbot with the same conversation id just waits a turn.
        keyOf: (request) => request.body.conversationId,
        run: async (client, group) =>
          (await captureGroup(client, keyring, group, now)).map((outcome) =>
            outcome instanceof AppError ? { ok: false, error: outcome } : { ok: true, value: outcome },
          ),
      },
      opts,
    )
  }

  capture(request: CaptureRequest): Promise<CaptureResult> {
    return this.committer.submit(request)
  }
}
