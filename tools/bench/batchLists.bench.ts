// list-batch-call-tasks and list-batch-calls (issue 31 item 3, performance: "a page of list-batch-call-tasks over a
// 100,000-task batch is answered in milliseconds"): the repository (BatchCallLists, what the handlers call: key
// checked and minted, the statement, the rows turned into items) against a baseline in the same run, on the data of
// the plan tests (store/test-support/BatchListsSeed.ts: a 100,000-task batch among 2,500 batches).
//
//   node tools/bench/batchLists.bench.ts          BATCHLISTS_BENCH_REPS=n (default 200)
//
// Baselines, through a bare `pg` client on its own connection: for a page of tasks, the same rows read straight off
// the batch's (batch_call_id, task_index) key, or its state index, with no call join, batch lookup or key (the least
// any such page costs); for a page of batches, the bare page statement, and the same batches' get-batch-call reads one
// after another (what a client does without the list). Paths alternate and swap order every repetition, so load on a
// shared machine hits both alike; medians and p95 over the repetitions. Embedded PostgreSQL in a temporary directory,
// removed at the end. Prints a Markdown table; exit code 0 either way (a loaded machine is not a regression).
import { ListBatchCallsBody, ListBatchCallTasksBody } from "@svc/domain/models/BatchCallLists.ts"
import { BatchCallId } from "@svc/domain/models/Ids.ts"
import { BatchCallLists } from "@svc/store/batches/BatchCallLists.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import * as BatchListsSeed from "@svc/store/test-support/BatchListsSeed.ts"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const REPS = Number(process.env["BATCHLISTS_BENCH_REPS"] ?? 200)
const { BIG, NOW, ORG } = BatchListsSeed
const MINUTE = 60_000

const log = (line: string) => process.stderr.write(`${line}\n`)
const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-batchlists-"))
fs.chmodSync(dataDir, 0o755)
const server = await Effect.runPromise(
  Scope.provide(
    EmbeddedPostgres.start({ dataDir, database: "bench", settings: { shared_buffers: "256MB", jit: "off" } }),
    scope
  )
)
const url = (() => {
  const parsed = new URL(Redacted.value(server.adminUrl))
  parsed.pathname = "/bench"
  return parsed.toString()
})()

const main = async () => {
  const runtime = ManagedRuntime.make(
    BatchCallLists.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(CursorKeys.layer, BatchProgressRepo.layer)),
      Layer.provideMerge(Database.layerFromUrl(Redacted.make(url), { maxConnections: 4 }))
    )
  )
  const started = performance.now()
  await runtime.runPromise(BatchListsSeed.load)
  log(
    `seeded ${BatchListsSeed.TASKS} tasks and 2,500 batches in ${((performance.now() - started) / 1000).toFixed(1)} s`
  )

  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const bare = (text: string, params: Array<unknown>) => client.query(text, params).then((r) => r.rowCount)

  const tasksBody = Schema.decodeUnknownSync(ListBatchCallTasksBody)
  const batchesBody = Schema.decodeUnknownSync(ListBatchCallsBody)
  const tasks = (body: unknown) =>
    runtime.runPromise(Effect.flatMap(BatchCallLists, (l) => l.tasks(ORG, BIG, tasksBody(body), NOW)))
  const batches = (body: unknown) =>
    runtime.runPromise(Effect.flatMap(BatchCallLists, (l) => l.batchCalls(ORG, batchesBody(body), NOW)))
  const gets = (ids: ReadonlyArray<string>) =>
    runtime.runPromise(
      Effect.flatMap(BatchProgressRepo, (p) => Effect.forEach(ids, (id) => p.get(ORG, BatchCallId.make(id), NOW)))
    )

  // a key 90,000 tasks into the batch, minted by a walk of real pages (keys are opaque)
  let deepKey: string | undefined
  for (let page = 0; page < 90; page++) {
    const next: { pagination_key?: string } = await tasks({
      limit: 1000,
      ...(deepKey ? { pagination_key: deepKey } : {})
    })
    deepKey = next.pagination_key
  }
  // the 20 batches around the 100,000-task one (the 1,000th): created between batches 981 and 1,000
  const aroundBig = { type: "range", value: [NOW + 981 * MINUTE, NOW + 1000 * MINUTE] }
  const newest = (await batches({})).items.map((b) => b.batch_call_id)
  const around = (await batches({ filter_criteria: { created_timestamp: aroundBig } })).items.map((b) =>
    b.batch_call_id
  )

  const taskColumns = "task_id, task_index, to_number, state, state_reason, attempts, call_id, not_before, metadata"
  const scenarios: ReadonlyArray<{
    readonly name: string
    readonly svc: () => Promise<unknown>
    readonly baseline: () => Promise<unknown>
    readonly baselineName: string
  }> = [
    {
      name: "tasks, page 1 (100)",
      svc: () => tasks({ limit: 100 }),
      baselineName: "bare rows off the task key",
      baseline: () =>
        bare(
          `SELECT ${taskColumns} FROM batch_call_tasks WHERE batch_call_id = $1 ORDER BY task_index LIMIT 101`,
          [BIG]
        )
    },
    {
      name: "tasks, page at 90,000 (100)",
      svc: () => tasks({ limit: 100, pagination_key: deepKey }),
      baselineName: "bare rows off the task key",
      baseline: () =>
        bare(
          `SELECT ${taskColumns} FROM batch_call_tasks WHERE batch_call_id = $1 AND task_index > 89999
           ORDER BY task_index LIMIT 101`,
          [BIG]
        )
    },
    {
      name: "tasks, state failed (100 of 1,000, last in the batch)",
      svc: () => tasks({ limit: 100, filter_criteria: { state: { type: "enum", value: ["failed"] } } }),
      baselineName: "bare rows off the state index",
      baseline: () =>
        bare(
          `SELECT ${taskColumns} FROM batch_call_tasks WHERE batch_call_id = $1 AND state = 'failed'
           ORDER BY task_index LIMIT 101`,
          [BIG]
        )
    },
    {
      name: "tasks, states failed+skipped+pending (100)",
      svc: () =>
        tasks({ limit: 100, filter_criteria: { state: { type: "enum", value: ["failed", "skipped", "pending"] } } }),
      baselineName: "bare rows of one state",
      baseline: () =>
        bare(
          `SELECT ${taskColumns} FROM batch_call_tasks WHERE batch_call_id = $1 AND state = 'failed'
           ORDER BY task_index LIMIT 101`,
          [BIG]
        )
    },
    {
      name: "batches, newest 20 (2 tasks each)",
      svc: () => batches({}),
      baselineName: "their 20 get-batch-call reads in a row",
      baseline: () => gets(newest)
    },
    {
      name: "batches, 20 incl. the 100,000-task one",
      svc: () => batches({ filter_criteria: { created_timestamp: aroundBig } }),
      baselineName: "their 20 get-batch-call reads in a row",
      baseline: () => gets(around)
    },
    {
      name: "batches, page statement alone",
      svc: () =>
        bare(
          `SELECT batch_call_id, created_timestamp FROM batch_calls WHERE org_id = $1
           ORDER BY created_timestamp DESC, batch_call_id DESC LIMIT 21`,
          [ORG]
        ),
      baselineName: "-",
      baseline: () => Promise.resolve(0)
    }
  ]

  const rows: Array<string> = []
  for (const scenario of scenarios) {
    const a: Array<number> = []
    const b: Array<number> = []
    for (let i = 0; i < 10; i++) await Promise.all([scenario.svc(), scenario.baseline()]).catch(() => undefined)
    for (let rep = 0; rep < REPS; rep++) {
      const time = async (f: () => Promise<unknown>, into: Array<number>) => {
        const t0 = performance.now()
        await f()
        into.push(performance.now() - t0)
      }
      if (rep % 2 === 0) {
        await time(scenario.svc, a)
        await time(scenario.baseline, b)
      } else {
        await time(scenario.baseline, b)
        await time(scenario.svc, a)
      }
    }
    const [ma, mb] = [quantile(a, 0.5), quantile(b, 0.5)]
    rows.push(
      `| ${scenario.name} | ${fmt(ma)} | ${fmt(quantile(a, 0.95))} | ${scenario.baselineName} | ${fmt(mb)} | ${
        fmt(quantile(b, 0.95))
      } | ${scenario.baselineName === "-" ? "-" : (ma / mb).toFixed(2)} |`
    )
    log(rows[rows.length - 1]!)
  }
  process.stdout.write(
    `\n${REPS} repetitions, load ${os.loadavg()[0]!.toFixed(2)}, ${os.cpus().length} cores\n\n` +
      "| scenario | svc median ms | svc p95 ms | baseline | baseline median ms | baseline p95 ms | svc / baseline |\n" +
      "| --- | ---: | ---: | --- | ---: | ---: | ---: |\n" + rows.join("\n") + "\n"
  )
  await client.end()
  await runtime.dispose()
}

try {
  await main()
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
