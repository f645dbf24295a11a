import {
  type EmbeddedPostgresOptions,
  RESTART_DELAYS_MS,
  type RunningPostgres,
  runningEmbeddedPostgres,
  startEmbeddedPostgres,
} from './embedded-postgres.ts'
import {
  forgetOwner,
  postmasterOf,
  readOwner,
  stopOrphanedEmbeddedPostgres,
  writeOwner,
} from './embedded-postgres-owner.ts'
import { capLog } from './embedded-postgres-process.ts'
import { isAlive, liveUsers, registerUser, untilNoneLeaves, whileLeaving } from './embedded-postgres-users.ts'

/**
 * The embedded server already running on `dataDir` (started by another process of ours), used by this
 * process until `stop`: registered as its user, so that its owner, leaving first, hands it over rather
 * than stop it. `stop` unregisters; when the server was handed over to this process, it hands it on to
 * another user or, with none left, stops it. Undefined when none runs. Handed over, a server that dies is
 * started again by this process on the same port, with `opts` (superviseHandedOver).
 */
export async function useRunningEmbeddedPostgres(
  dataDir: string,
  opts: Omit<EmbeddedPostgresOptions, 'dataDir' | 'port' | 'holdStop' | 'holdSpawn'> = {},
): Promise<RunningPostgres | undefined> {
  // Registered only where a server runs: its directory exists then (made here, DATA_DIR would be made
  // mode 700, out of the postgres user's reach as root); looked at again after, in case it stopped since.
  if (!postmasterOf(dataDir)) return undefined
  const unregister = await registerUser(dataDir)
  // Its owner may be leaving, having looked for users before this one registered: the server is looked
  // at once it has stopped it (none then) or handed it over.
  await untilNoneLeaves(dataDir)
  const server = postmasterOf(dataDir)
  const url = runningEmbeddedPostgres(dataDir)
  if (!server || !url) {
    await unregister()
    return undefined
  }
  const supervisor = superviseHandedOver(dataDir, server.port, opts)
  // Once: a CLI's signal handler and its own end may both stop it.
  let leaving: Promise<void> | undefined
  const stop = () => {
    leaving ??= leave()
    return leaving
  }
  const leave = async () => {
    const adopted = await supervisor.stop()
    await unregister()
    if (adopted) return adopted.stop()
    // An owner handing the server over to this process as it leaves names it in the file when done.
    await untilNoneLeaves(dataDir)
    if (readOwner(dataDir) !== process.pid) return
    await whileLeaving(dataDir, async () => {
      const [heir] = liveUsers(dataDir)
      if (heir !== undefined) return writeOwner(dataDir, heir)
      const running = postmasterOf(dataDir)
      if (running) await stopOrphanedEmbeddedPostgres(running.pid)
      await forgetOwner(dataDir)
    })
  }
  return { url, port: server.port, stop }
}

/**
 * Starts the embedded server on `opts.dataDir` (startEmbeddedPostgres) or, when another process of ours
 * started one there after this process looked (a user's or heir's restart under way, another start),
 * uses that one: Postgres lets one postmaster run on a cluster and refused this one, and the server that
 * won serves this process as well as its own would. `used` says which. The start's error when none runs.
 */
export async function startOrUseEmbeddedPostgres(
  opts: EmbeddedPostgresOptions,
): Promise<{ server: RunningPostgres; used: boolean }> {
  try {
    return { server: await startEmbeddedPostgres(opts), used: false }
  } catch (err) {
    const { dataDir, port: _port, holdStop: _holdStop, holdSpawn: _holdSpawn, ...rest } = opts
    const running = await useRunningEmbeddedPostgres(dataDir, rest)
    if (!running) throw err
    return { server: running, used: true }
  }
}

/**
 * A server handed over to this process is no child of it: nothing would notice it die, and its users
 * would answer 503 until the next start on `dataDir`. Looked at every second while the owner file names
 * this process: gone, it is started again here, on the same port (the URL the pools have), as the owner
 * restarts its own (the same delays between failed attempts); this process is then its parent and owner,
 * and `stop` returns that server for the caller to stop. The same when the process the file names is
 * gone without handing it over (a CLI ended by Ctrl-C). A file naming another live process means that one
 * owns it (its restart loop, or it took the cluster over): nothing is started then.
 */
function superviseHandedOver(
  dataDir: string,
  port: number,
  opts: Omit<EmbeddedPostgresOptions, 'dataDir' | 'port' | 'holdStop' | 'holdSpawn'>,
): { stop(): Promise<RunningPostgres | undefined> } {
  const alert = opts.alert ?? opts.log ?? (() => {})
  const delays = opts.restartDelaysMs?.length ? opts.restartDelaysMs : RESTART_DELAYS_MS
  let attempts = 0
  let nextAttemptAt = 0
  let starting: Promise<void> | undefined
  let adopted: RunningPostgres | undefined
  const look = setInterval(() => {
    if (starting || Date.now() < nextAttemptAt) return
    // Its owner's to start again while that one runs (its own restart loop); this process's once handed
    // over, or once its owner is gone without handing it over (killed, or ended by a signal before its
    // handler was set).
    const owner = readOwner(dataDir)
    const heir = owner === process.pid
    if (!heir && owner !== undefined && isAlive(owner)) return
    const running = postmasterOf(dataDir)
    if (running) {
      // Handed over, its log is this process's to cap, as its starter did.
      if (heir) capLog(dataDir, running.pid, opts.logCapBytes)
      // Its owner gone without stopping it (the server runs in a process group of its own): this process
      // takes it over, as if handed it, rather than leave it running for nobody once it leaves.
      if (!heir && owner !== undefined) {
        void writeOwner(dataDir).then(() =>
          alert(
            `the embedded Postgres in ${dataDir}, its owner (process ${owner}) gone, runs on; owned by this process now`,
          ),
        )
      }
      return
    }
    if (attempts === 0) {
      const whose = heir ? 'handed over to this process' : `its owner (process ${owner}) gone`
      alert(`the embedded Postgres in ${dataDir}, ${whose}, exited; starting it again`)
    }
    nextAttemptAt = Date.now() + (delays[Math.min(attempts, delays.length - 1)] ?? 0)
    attempts++
    starting = startEmbeddedPostgres({ ...opts, dataDir, port })
      .then((server) => {
        adopted = server
        clearInterval(look)
        alert(`the embedded Postgres in ${dataDir} is running again`)
      })
      .catch((err: Error) => alert(`could not start the embedded Postgres again (${err.message}); retrying`))
      .finally(() => {
        starting = undefined
      })
  }, 1_000)
  look.unref()
  return {
    async stop() {
      clearInterval(look)
      await starting
      return adopted
    },
  }
}
