/**
 * `svc-scheduler` worker processes for the process-level tests: started on a database with the simulated carrier
 * recording every dial request in PostgreSQL (`SIMULATED_DIALER_STORE=sql`, shared by all processes), so a test counts
 * dials by idempotency key across kills.
 */
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Config, Deferred, Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..", "..")
const main = path.join(root, "apps/scheduler/src/main.ts")

/**
 * A database of its own for the workers of one test, made from the test template (migrated) and dropped when the
 * scope closes; returns its URL.
 */
export const workerDatabase = (prefix: string) =>
  Effect.gen(function*() {
    const admin = Redacted.make(yield* Config.String("SVC_TEST_ADMIN_URL"))
    const template = yield* Config.String("SVC_TEST_TEMPLATE")
    const name = `${prefix}_${process.pid}_${Date.now().toString(36)}`
    yield* Effect.acquireRelease(
      DatabaseAdmin.ensureDatabase(admin, name, template).pipe(Effect.orDie),
      () => DatabaseAdmin.dropDatabase(admin, name).pipe(Effect.ignore)
    )
    return TestDatabase.urlFor(admin, name)
  })

/** A worker process and what it printed (its last lines help when a test fails). */
export interface Worker {
  readonly child: ChildProcess
  readonly exited: Deferred.Deferred<number | null>
  output: string
}

/**
 * Starts a worker named `id` (a random suffix keeps restarted workers apart) on `url`; `env` adds to or overrides the
 * defaults (short lease and poll, simulated carrier with `latencyMs` per call).
 */
export const startWorker = (
  url: string,
  id: string,
  options: { readonly latencyMs: number; readonly env?: Record<string, string> }
) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<number | null>()
    const child = spawn(process.execPath, [main], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: url,
        LOG_LEVEL: "Warn",
        SVC_DB_MAX_CONNECTIONS: "5",
        SCHEDULER_WORKER_ID: `${id}-${Math.random().toString(36).slice(2, 6)}`,
        SCHEDULER_LEASE_MS: "3000",
        SCHEDULER_POLL_MS: "200",
        SCHEDULER_RECONCILE_RECHECK_MS: "300",
        SCHEDULER_SHUTDOWN_GRACE_MS: "2000",
        SCHEDULER_BACKFILL_CRON: "off",
        SIMULATED_DIALER_STORE: "sql",
        SIMULATED_DIALER_SEED: "42",
        SIMULATED_DIALER_LATENCY_MS: String(options.latencyMs),
        ...options.env
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const worker: Worker = { child, exited, output: "" }
    const keep = (chunk: Buffer) => {
      worker.output = (worker.output + chunk.toString()).slice(-4_000)
    }
    child.stdout?.on("data", keep)
    child.stderr?.on("data", keep)
    child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
    return worker
  })
