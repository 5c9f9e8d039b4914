// create-batch-call of 100,000 tasks (issue 4): BatchCallsRepo.create (checks, body hash, idempotency record,
// batch row, an unnest INSERT per 2,000 tasks since decision 0303, one transaction) against the floor for the same
// rows: a bare `pg` client that COPYs them (pg-copy-streams) in one transaction. Goal: the repository within 2x of
// the bare COPY.
//
//   node tools/bench/batchCall.bench.ts [--rounds=7] [--tasks=100000]
//
// Runs on DATABASE_URL when set (a bench org is added and removed), else on an embedded PostgreSQL in a
// temporary directory. Both paths start from the same decoded request in memory and end with the rows committed;
// they alternate (and swap order each round) after a CHECKPOINT, so background load and WAL state hit both alike.
// Prints a Markdown table of medians; the exit code is 0 either way (a loaded machine is not a regression).
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Effect, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { createRequire } from "node:module"
import * as os from "node:os"
import type { Writable } from "node:stream"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import pg from "pg"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

// pg-copy-streams ships no type declarations; this is the one function used.
const { from: copyFrom } = createRequire(import.meta.url)("pg-copy-streams") as {
  readonly from: (text: string) => Writable & pg.Submittable
}

const GOAL = 2

const rounds = argument("rounds", 7)
const taskCount = argument("tasks", 100_000)

const ms = (n: number) => n.toFixed(0)

// ---------------------------------------------------------------------------------------------------------------
// Database: DATABASE_URL, or an embedded server of our own
// ---------------------------------------------------------------------------------------------------------------

const database = await benchDatabase("batch")
const { dataDir, url } = database
const runtime = ManagedRuntime.make(
  BatchCallsRepo.layer.pipe(Layer.provideMerge(Database.layerFromUrl(url, { maxConnections: 2 })))
)
const run = <A, E>(effect: Effect.Effect<A, E, BatchCallsRepo | SqlClient.SqlClient>) => runtime.runPromise(effect)

const orgId = OrgId.make(`org_bench_${process.pid}`)
const FROM = "+14155550100"
await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, 'batch-call benchmark', 0)`
  yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
  yield* sql`INSERT INTO agents (org_id, agent_id, version, created_timestamp) VALUES (${orgId}, 'agent_a', 1, 0)`
}))

// ---------------------------------------------------------------------------------------------------------------
// The request: what a CRM export sends (a number, a first name, a CRM id; an agent override on 1% of tasks)
// ---------------------------------------------------------------------------------------------------------------

const decodeStarted = performance.now()
const request = Schema.decodeUnknownSync(CreateBatchCallRequest)({
  from_number: FROM,
  name: "benchmark",
  call_time_window: { windows: [{ start: 540, end: 1020 }], timezone: "America/New_York" },
  tasks: Array.from({ length: taskCount }, (_, i) => ({
    to_number: `+1212${String(i).padStart(7, "0")}`,
    svc_llm_dynamic_variables: { first_name: `Customer ${i}`, plan: i % 3 === 0 ? "gold" : "basic" },
    metadata: { crm_id: `crm-${i}`, row: i },
    ...(i % 100 === 0 ? { override_agent_id: "agent_a", override_agent_version: 1 } : {})
  }))
})
const decodeMs = performance.now() - decodeStarted

// ---------------------------------------------------------------------------------------------------------------
// The two paths
// ---------------------------------------------------------------------------------------------------------------

const viaRepo = () =>
  run(Effect.gen(function*() {
    const repo = yield* BatchCallsRepo
    return yield* repo.create(orgId, "bench_key", request, {
      maxTasks: taskCount,
      legalGrouper: () => new LegalGrouper(),
      retryCount: 0
    })
  }))

// COPY text format: backslash, tab, newline and carriage return escaped; \N is NULL.
const copyField = (value: string | undefined): string =>
  value === undefined ?
    "\\N" :
    value.replace(/[\\\t\n\r]/g, (c) => c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r")
const json = (value: unknown) => value === undefined ? undefined : JSON.stringify(value)

const client = new pg.Client({ connectionString: Redacted.value(url) })
await client.connect()
let bareBatches = 0
const viaCopy = async () => {
  const batchCallId = `batch_call_bare_${process.pid}_${++bareBatches}`
  const now = Date.now()
  await client.query("BEGIN")
  try {
    await client.query(
      `INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, name, from_number, scheduled_timestamp,
        call_time_window, total_task_count, next_dispatch_at, created_timestamp)
       VALUES ($1, $2, 'bench_key', $3, $4, $5, $6, $7, $5, $5)`,
      [batchCallId, orgId, request.name ?? "", FROM, now, JSON.stringify(request.call_time_window), taskCount]
    )
    const prefix = `${orgId}\t${batchCallId}\t`
    const lines = new Array<string>(request.tasks.length)
    for (let i = 0; i < request.tasks.length; i++) {
      const task = request.tasks[i]!
      const version = task.override_agent_version
      lines[i] = prefix + i + "\t" + copyField(task.to_number) + "\t" + copyField(task.override_agent_id) + "\t" +
        (typeof version === "number" ? String(version) : "\\N") + "\t" +
        copyField(typeof version === "string" ? version : undefined) + "\t" + copyField(json(task.agent_override)) +
        "\t" + copyField(json(task.svc_llm_dynamic_variables)) + "\t" + copyField(json(task.metadata)) + "\t" +
        copyField(json(task.custom_sip_headers)) + "\n"
    }
    const copy = client.query(copyFrom(
      `COPY batch_call_tasks (org_id, batch_call_id, task_index, to_number, override_agent_id, override_agent_version,
        override_agent_version_name, agent_override, dynamic_variables, metadata, custom_sip_headers) FROM STDIN`
    ))
    await pipeline(Readable.from([lines.join("")]), copy)
    await client.query("COMMIT")
  } catch (error) {
    await client.query("ROLLBACK")
    throw error
  }
}

const timed = async (body: () => Promise<unknown>) => {
  await client.query("CHECKPOINT")
  const started = performance.now()
  await body()
  return performance.now() - started
}

// ---------------------------------------------------------------------------------------------------------------
// Rounds
// ---------------------------------------------------------------------------------------------------------------

const samples = { repo: [] as Array<number>, copy: [] as Array<number> }
const loadBefore = os.loadavg()[0]!
// warm-up: JIT, prepared statements, the tables' first pages
await viaRepo()
await viaCopy()
for (let round = 0; round < rounds; round++) {
  if (round % 2 === 0) {
    samples.repo.push(await timed(viaRepo))
    samples.copy.push(await timed(viaCopy))
  } else {
    samples.copy.push(await timed(viaCopy))
    samples.repo.push(await timed(viaRepo))
  }
}
const loadAfter = os.loadavg()[0]!

const [check] = await client.query<{ tasks: string; batches: string }>(
  "SELECT count(*) AS tasks, count(DISTINCT batch_call_id) AS batches FROM batch_call_tasks WHERE org_id = $1",
  [orgId]
).then((r) => r.rows)
const expectedBatches = 2 * (rounds + 1)
if (Number(check!.batches) !== expectedBatches || Number(check!.tasks) !== expectedBatches * taskCount) {
  throw new Error(`expected ${expectedBatches} batches of ${taskCount} tasks, found ${JSON.stringify(check)}`)
}

// clean up: the trigger on batch_calls deletes the tasks
await client.query("DELETE FROM batch_calls WHERE org_id = $1", [orgId])
await client.query("DELETE FROM orgs WHERE org_id = $1", [orgId])
await client.end()
await runtime.dispose()
await database.close()

const repo = median(samples.repo)
const copy = median(samples.copy)
const ratio = repo / copy
const cpu = os.cpus()[0]?.model ?? "unknown CPU"
const thousands = (n: number) => n.toLocaleString("en-US")
const lines = [
  `create-batch-call storage, ${thousands(taskCount)} tasks, Node ${process.version}, ${cpu} x ${os.cpus().length}, ` +
  `PostgreSQL ${dataDir === undefined ? "at DATABASE_URL" : "embedded"}; 1-minute load average ` +
  `${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after; medians of ${rounds} rounds.`,
  "",
  "| path | median ms | best ms | worst ms | tasks/s | vs bare COPY |",
  "|---|---:|---:|---:|---:|---:|",
  `| BatchCallsRepo.create (checks, hash, idempotency record, an unnest INSERT per 2,000 tasks, one transaction) | ${
    ms(repo)
  } | ` +
  `${ms(Math.min(...samples.repo))} | ${ms(Math.max(...samples.repo))} | ${
    thousands(Math.round(taskCount / repo * 1000))
  } | ` +
  `${ratio.toFixed(2)}x |`,
  `| bare pg + COPY of the same rows (batch row, COPY, one transaction) | ${ms(copy)} | ` +
  `${ms(Math.min(...samples.copy))} | ${ms(Math.max(...samples.copy))} | ${
    thousands(Math.round(taskCount / copy * 1000))
  } | ` +
  "1.00x |",
  "",
  `Goal: within ${GOAL}x of the bare COPY: ${
    ratio <= GOAL ? "met" : `missed by ${((ratio / GOAL - 1) * 100).toFixed(0)}%`
  }. Not in either path: decoding the ${thousands(taskCount)}-task JSON body with the request schema, ` +
  `${ms(decodeMs)} ms once (the HTTP layer's work).`,
  ""
]
process.stdout.write(lines.join("\n"))
