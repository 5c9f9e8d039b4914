/**
 * The real processes behind a batch test (decision 0702): a fresh database with an org and its key, an `svc-server`
 * bin on a free port and `svc-scheduler` bins running the batch-test worker, each started as its users start it and
 * SIGKILLed with the scope, so a failed assertion leaves nothing running.
 */
import { assert } from "@effect/vitest"
import { waitUntil } from "@svc/runtime/test-support/Waiting.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Deferred, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { freePort } from "./Svc.ts"

const root = path.resolve(import.meta.dirname, "..", "..", "..")
const serverBin = path.join(root, "apps/server/bin/svc-server.mjs")
const schedulerBin = path.join(root, "apps/scheduler/bin/svc-scheduler.mjs")

/** A started bin: its exit and the tail of what it printed (shown when an assertion fails). */
export interface Proc {
  readonly child: ReturnType<typeof spawn>
  readonly exited: Deferred.Deferred<number | null>
  readonly output: () => string
}

export const start = (bin: string, env: Record<string, string>) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<number | null>()
    let output = ""
    const child = spawn(process.execPath, [bin], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: "Warn", SVC_DB_MAX_CONNECTIONS: "4", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-6_000))
    child.stdout.on("data", keep)
    child.stderr.on("data", keep)
    child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
    // a failed assertion leaves nothing running
    yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
    return { child, exited, output: () => output } satisfies Proc
  })

/** A fresh database (a clone of the migrated template), an org and its API key; queries on it. */
export const database = Effect.gen(function*() {
  const context = yield* Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(TestDatabase.layer)))
  return yield* Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // the processes connect to the same database by URL
    const [current] = yield* sql<{ readonly name: string }>`SELECT current_database() AS name`
    const url = TestDatabase.urlFor(yield* TestDatabase.adminUrl, current!.name)
    const keys = yield* ApiKeys
    const orgId = yield* keys.createOrg("batch test e2e")
    const key = yield* keys.createKey(orgId)
    const query = <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
      f(sql).pipe(Effect.orDie)
    return { url: Redacted.value(url), key, orgId, query }
  }).pipe(Effect.provideContext(context), Effect.orDie)
})

/** An `svc-server` on a free port, answering. */
export const startServer = (databaseUrl: string) =>
  Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    // llm_websocket_url is on 127.0.0.1: the webhooks' address rule is lifted as for a local server
    const server = yield* start(serverBin, {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      SVC_WEBHOOK_ALLOW_PRIVATE: "true"
    })
    const base = `http://127.0.0.1:${port}`
    yield* waitUntil(
      "svc-server to answer /healthz",
      Effect.gen(function*() {
        if (yield* Deferred.isDone(server.exited)) assert.fail(`svc-server exited at start-up: ${server.output()}`)
        return yield* Effect.promise(() => fetch(`${base}/healthz`).then((r) => r.ok, () => false))
      }),
      { timeoutMs: 90_000, everyMs: 100, state: server.output }
    )
    return { base, server }
  })

/** An `svc-scheduler` (its batch-test worker polling every 50 ms) with no chat-completions endpoint unless `extra`. */
export const startScheduler = (databaseUrl: string, workerId: string, extra: Record<string, string> = {}) =>
  start(schedulerBin, {
    DATABASE_URL: databaseUrl,
    SCHEDULER_WORKER_ID: workerId,
    SCHEDULER_POLL_MS: "200",
    SCHEDULER_BACKFILL_CRON: "off",
    SCHEDULER_SHUTDOWN_GRACE_MS: "2000",
    SVC_WEBHOOK_ALLOW_PRIVATE: "true",
    SVC_BATCH_TEST_POLL_MS: "50",
    // no chat-completions endpoint: simulation runs end error saying what to set
    SVC_TEST_LLM_URL: "",
    ...extra
  })
