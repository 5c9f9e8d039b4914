// A maximal legitimate create-batch-call succeeds on a server whose JavaScript heap is capped far below the
// body's size (issue 16, item 3; decision 0303): 100,000 tasks, each with an override agent, an agent_override
// and a dozen dynamic variables (~190 MiB of JSON), sent with its Content-Length to `svc-server` started with
// `--max-old-space-size=192`. Decoding the whole body needed 6-16 times its size and dies of heap exhaustion
// there; read as a stream, the batch is stored whole, and the process's peak resident memory stays under 4 times
// the body.
import { assert, describe, it } from "@effect/vitest"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Config, Deferred, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as path from "node:path"
import { FROM_NUMBER, heavyBatchBody } from "../bench/support/BatchBodies.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const TASKS = 100_000
const HEAP_MIB = 192

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const statusOf = (pid: number, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) *
  1024

const post = (port: number, key: string, body: Buffer) =>
  Effect.callback<{ readonly status: number; readonly text: string }, Error>((resume) => {
    const request = http.request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/create-batch-call",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": body.length }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on(
        "end",
        () => resume(Effect.succeed({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      )
    })
    request.on("error", (error) => resume(Effect.fail(error)))
    request.end(body)
  })

describe("create-batch-call memory", () => {
  it.live(
    `stores a ${TASKS.toLocaleString("en-US")}-task batch with overrides on a server with a ${HEAP_MIB} MiB heap`,
    () =>
      Effect.gen(function*() {
        const admin = Redacted.make(yield* Config.String("SVC_TEST_ADMIN_URL"))
        const template = yield* Config.String("SVC_TEST_TEMPLATE")
        const name = `svc_memory_${process.pid}_${Date.now().toString(36)}`
        yield* Effect.acquireRelease(
          DatabaseAdmin.ensureDatabase(admin, name, template).pipe(Effect.orDie),
          () => DatabaseAdmin.dropDatabase(admin, name).pipe(Effect.ignore)
        )
        const url = TestDatabase.urlFor(admin, name)
        const context = yield* Layer.build(
          ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(url, { migrate: false, maxConnections: 2 })))
        )
        const { key, orgId } = yield* Effect.gen(function*() {
          const keys = yield* ApiKeys
          const orgId = yield* keys.createOrg("memory test")
          yield* keys.addPhoneNumber(orgId, FROM_NUMBER)
          yield* keys.addAgent(orgId, "agent_a", 1)
          return { orgId, key: yield* keys.createKey(orgId) }
        }).pipe(Effect.provideContext(context), Effect.orDie)

        const port = yield* Effect.promise(freePort)
        const exited = yield* Deferred.make<number | null>()
        let output = ""
        const child = yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawn(process.execPath, [`--max-old-space-size=${HEAP_MIB}`, "apps/server/src/main.ts"], {
              cwd: root,
              env: { ...process.env, DATABASE_URL: Redacted.value(url), PORT: String(port), LOG_LEVEL: "Warn" },
              stdio: ["ignore", "pipe", "pipe"]
            })
          ),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
        const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000))
        child.stdout.on("data", keep)
        child.stderr.on("data", keep)
        child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
        for (let i = 0;; i++) {
          if (yield* Deferred.isDone(exited)) assert.fail(`the server exited at start-up: ${output}`)
          const up = yield* Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)
          )
          if (up) break
          if (i > 600) assert.fail(`the server did not start: ${output}`)
          yield* Effect.sleep("100 millis")
        }

        const body = Buffer.from(heavyBatchBody(TASKS))
        const idle = statusOf(child.pid!, "VmRSS")
        const answer = yield* post(port, key, body).pipe(
          Effect.catch((error) => Effect.succeed({ status: 0, text: `${error.message}; server output: ${output}` }))
        )
        assert.strictEqual(answer.status, 200, answer.text.slice(0, 2_000))
        assert.strictEqual((JSON.parse(answer.text) as { total_task_count: number }).total_task_count, TASKS)
        const peak = statusOf(child.pid!, "VmHWM")

        const [stored] = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ tasks: number; last: number }>`
            SELECT count(*)::int4 AS tasks, max(task_index)::int4 AS last FROM batch_call_tasks WHERE org_id = ${orgId}`
        }).pipe(Effect.provideContext(context), Effect.orDie)
        assert.deepStrictEqual(stored, { tasks: TASKS, last: TASKS - 1 })
        // the goal of issue 16: under 4x the body per request (measured: docs/benchmarks.md)
        assert.isBelow(peak - idle, 4 * body.length, `peak ${peak} idle ${idle} body ${body.length}`)
      }).pipe(Effect.scoped),
    300_000
  )
})
