// Issue 16, item 2, as an operator meets it: `npm start` under HTTP load with a batch dialling, and the
// embedded postmaster killed with SIGKILL. Every request answers 200 or 503 (never 500), the process
// restarts PostgreSQL itself and service resumes without a restart of svc, the log says so in a few
// lines (not a stack per request), and nothing is lost: every task of the batch is dialled exactly
// once (counted by idempotency key in the simulated carrier's records) and recorded once.
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@svc/store"
import { Effect, Exit, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import * as fs from "node:fs"
import { admin, alive, freePort, killTree, npm, postmasterOf, sleep, tempDataDir, waitFor } from "./support/Svc.ts"

const TASKS = 400

describe("a database outage under load", () => {
  it("answers 503 meanwhile, heals without a restart, and loses nothing", async () => {
    const dataDir = tempDataDir("svc-outage-")
    const port = await freePort()
    const env = {
      PORT: String(port),
      SVC_DATA_DIR: dataDir,
      SVC_DB_PROBE_MS: "200",
      SVC_RATE_LIMIT: "1000000",
      SCHEDULER_LEASE_MS: "3000",
      SCHEDULER_POLL_MS: "200",
      SCHEDULER_RECONCILE_RECHECK_MS: "300",
      SCHEDULER_BACKFILL_CRON: "off",
      SIMULATED_DIALER_STORE: "sql",
      SIMULATED_DIALER_LATENCY_MS: "300",
      // Warnings and errors only: what an operator reads during an outage, without each request's line.
      LOG_LEVEL: "Warn"
    }
    const svc = npm(["start"], env)
    const scope = Scope.makeUnsafe()
    try {
      await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000, (s) => s === 200)
      const orgId = (await admin(["create-org", "--name", "Outage", "--concurrency-limit", "20"], env)).json["org_id"]
      const key = (await admin(["create-api-key", "--org", String(orgId)], env)).json["api_key"] as string
      assert.strictEqual(
        (await admin(["add-phone-number", "--org", String(orgId), "--number", "+14155550100"], env)).code,
        0
      )
      const post = (route: string, body: unknown) =>
        fetch(`http://127.0.0.1:${port}${route}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const created = await post("/create-batch-call", {
        from_number: "+14155550100",
        // UK numbers: NANP numbers wait for the recipient's legal hours (issue 15, decision 0623), and this test runs
        // at any hour of the day
        tasks: Array.from({ length: TASKS }, (_, i) => ({ to_number: `+44207${String(i).padStart(7, "0")}` }))
      })
      assert.strictEqual(created.status, 200)
      const batchId = ((await created.json()) as { batch_call_id: string }).batch_call_id

      // A guest connection for the checks (joining makes this process one of the cluster's clients).
      const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
      // A connection per check: the outage breaks every open one.
      const query = <A extends object>(
        statement: (sql: PgClient.PgClient) => Effect.Effect<ReadonlyArray<A>, unknown>
      ) =>
        Effect.runPromise(
          Effect.scoped(Effect.flatMap(PgClient.makeClient({ url: server.url }), statement)).pipe(
            Effect.provide(Reactivity.layer),
            Effect.timeout("3 seconds"),
            Effect.option
          )
        )
      const finished = async () => {
        const rows = await query((sql) =>
          sql<{ n: number }>`
          SELECT count(*)::int4 AS n FROM batch_call_tasks
          WHERE batch_call_id = ${batchId} AND state IN ('completed', 'failed')`
        )
        return rows._tag === "Some" ? rows.value[0]!.n : -1
      }

      // Load: four clients calling list-contacts back to back, recording every status.
      const statuses = new Map<number, number>()
      let firstOkAfterKill: number | undefined
      const outage: { killedAt?: number } = {}
      let loading = true
      const loaders = Array.from({ length: 4 }, async () => {
        while (loading) {
          try {
            const response = await post("/list-contacts", { limit: 1 })
            await response.arrayBuffer()
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
            if (response.status === 503) assert.strictEqual(response.headers.get("retry-after"), "2")
            if (response.status === 200 && outage.killedAt !== undefined && firstOkAfterKill === undefined) {
              if (statuses.get(503)) firstOkAfterKill = Date.now()
            }
          } catch {
            statuses.set(0, (statuses.get(0) ?? 0) + 1)
          }
        }
      })

      // Kill PostgreSQL mid-batch.
      const quarterBy = Date.now() + 120_000
      for (let done = await finished(); done < TASKS / 4; done = await finished()) {
        assert.isBelow(Date.now(), quarterBy, `a quarter of the batch before the kill: ${done} of ${TASKS} after 120 s`)
        await sleep(50)
      }
      const pg = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)!
      outage.killedAt = Date.now()
      process.kill(pg, "SIGKILL")

      const deadline = Date.now() + 120_000
      while ((await finished()) < TASKS && Date.now() < deadline) await sleep(200)
      loading = false
      await Promise.all(loaders)

      const output = svc.output()
      const left = await finished()
      assert.isDefined(firstOkAfterKill, `service resumed:\n${output.slice(-3000)}`)
      // How fast it recovers is the outage benchmark's question (npm run bench:outage, docs/benchmarks.md "Database
      // outage recovery"), not this test's: a "within 30 s" of real time here measured the machine's load. The
      // deadline above bounds the wait.
      assert.isAbove(statuses.get(503) ?? 0, 0, "the outage was answered 503")
      assert.strictEqual(statuses.get(500) ?? 0, 0, `no 500s: ${JSON.stringify([...statuses])}`)
      assert.strictEqual(statuses.get(0) ?? 0, 0, "no connection refused: the HTTP server stayed up")
      assert.isTrue(alive(svc.child.pid), "svc was not restarted")
      const restarted = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)
      assert.isTrue(restarted !== undefined && restarted !== pg, "a new postmaster runs")

      const count = (text: string) => output.split("\n").filter((line) => line.includes(`"message":"${text}"`)).length
      assert.strictEqual(count("embedded PostgreSQL stopped unexpectedly; restarting it"), 1, output.slice(-3000))
      assert.strictEqual(count("database unavailable; answering 503 until it returns"), 1)
      assert.strictEqual(count("database available again"), 1)
      assert.strictEqual(count("unexpected failure"), 0, "no stack trace per request")
      // The scheduler: one line when it pauses, one when it resumes, whichever loop noticed first; no stacks.
      // (the scheduler's DatabaseHealth: "database unavailable", then "database available again after N s")
      assert.strictEqual(count("database unavailable"), 1, output.slice(-3000))
      assert.strictEqual(
        output.split("\n").filter((line) => line.includes(`"message":"database available again after `)).length,
        1,
        output.slice(-3000)
      )
      assert.notMatch(output, /\\n\s+at /, "no stack trace in the log")

      // Nothing lost, no one dialled twice.
      const [dials] = (await query((sql) =>
        sql<{ attempts: number; keys: number; repeated: number }>`
        SELECT count(*)::int4 AS attempts, count(DISTINCT idempotency_key)::int4 AS keys,
          (SELECT count(*)::int4 FROM (
            SELECT 1 FROM simulated_dialer_attempts GROUP BY idempotency_key HAVING count(*) > 1) r) AS repeated
        FROM simulated_dialer_attempts`
      )).pipe((o) => o._tag === "Some" ? o.value : [])
      assert.strictEqual(left, TASKS, `every task finished:\n${output.slice(-3000)}`)
      assert.deepStrictEqual(dials, { attempts: TASKS, keys: TASKS, repeated: 0 }, output.slice(-3000))
      const [recorded] = (await query((sql) =>
        sql<{ calls: number; status: string }>`
        SELECT (SELECT count(*)::int4 FROM calls WHERE batch_call_id = ${batchId}) AS calls,
          (SELECT status FROM batch_calls WHERE batch_call_id = ${batchId}) AS status`
      )).pipe((o) => o._tag === "Some" ? o.value : [])
      assert.deepStrictEqual(recorded, { calls: TASKS, status: "completed" })
      await Effect.runPromise(Scope.close(scope, Exit.void))

      svc.child.kill("SIGTERM")
      assert.strictEqual(await svc.exited, 0)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      killTree(svc.child.pid)
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 240_000)
})
