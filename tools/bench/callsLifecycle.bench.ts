// The call lifecycle's database cost per dialled task (issue 13 follow-up, docs/decisions/0540-*): the claim
// statement (`scheduler_claim`, which registers each call) and the record statement (`CallsRepo.recordFinished`,
// which finishes it), timed alone, without the dispatcher's loop, in databases that differ by one schema change
// each, round by round (alternating, on one embedded PostgreSQL), so the cost of each index or trigger on `calls`
// shows apart from the noise of a shared machine.
//
//   node tools/bench/callsLifecycle.bench.ts [--rounds=5] [--tasks=10000] [--chunk=500] [--variants=a,b]
//
// Variants (each a database migrated like production, then changed):
//   current       the schema as migrated
//   no-triggers   without the webhook outbox's statement triggers on calls
//   no-list       without the list indexes (calls_list, calls_batch, calls_to_number, calls_agent, calls_in_flight)
//   no-in-flight  without calls_in_flight
//   ff40, ff100   calls with another fillfactor (migration 0015 sets 30)
//   unregistered  the claim inserts no call row (as before issue 13): the record inserts it (its fallback path)
// Prints µs per task of each statement (medians of the rounds) and of PostgreSQL's execution as
// pg_stat_statements sees it, and the share of HOT updates of calls.
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import type { CallEnded } from "@svc/domain/ports/Dialer.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { CallsRepo } from "@svc/store/calls/CallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ORG_LOCK } from "@svc/store/dispatch/DispatchRepo.ts"
import { finishedFromCall } from "@svc/store/test-support/FinishedTasks.ts"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { argument, median } from "./support/BenchSupport.ts"

const rounds = argument("rounds", 5)
const taskCount = argument("tasks", 10_000)
const chunk = argument("chunk", 500)
const chosen = process.argv.find((a) => a.startsWith("--variants="))?.split("=")[1]?.split(",")

const variants: Record<string, ReadonlyArray<string>> = {
  current: [],
  "no-triggers": ["DROP TRIGGER calls_webhooks_insert ON calls", "DROP TRIGGER calls_webhooks_update ON calls"],
  // since migration 0035 `calls` is partitioned: its list indexes are the parent's, which drop their partitions' own
  "no-list": [
    "DROP INDEX calls_list_parted",
    "DROP INDEX calls_batch_parted",
    "DROP INDEX calls_to_number_parted",
    "DROP INDEX calls_agent_parted",
    "DROP INDEX IF EXISTS calls_in_flight"
  ],
  "no-in-flight": ["DROP INDEX IF EXISTS calls_in_flight"],
  // a partitioned table has no storage of its own: the fillfactor is its one partition's (no retention: calls_legacy)
  ff40: ["ALTER TABLE calls_legacy SET (fillfactor = 40)"],
  ff100: ["ALTER TABLE calls_legacy SET (fillfactor = 100)"],
  unregistered: []
}
const names = chosen ?? Object.keys(variants)

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-lifecycle-"))
fs.chmodSync(dataDir, 0o755)
const scope = Scope.makeUnsafe()
const server = await Effect.runPromise(
  Scope.provide(
    EmbeddedPostgres.start({
      dataDir,
      settings: {
        shared_preload_libraries: "'pg_stat_statements,auto_explain'",
        "pg_stat_statements.track": "all",
        // BENCH_EXPLAIN=1: the plans of statements over 5 ms in PostgreSQL's log, with buffers (diagnostics)
        ...(process.env["BENCH_EXPLAIN"] ?
          {
            "auto_explain.log_min_duration": "'5ms'",
            "auto_explain.log_analyze": "on",
            "auto_explain.log_buffers": "on",
            "auto_explain.log_nested_statements": "on"
          } :
          {})
      }
    }),
    scope
  )
)
const urlOf = (db: string) => Redacted.make(Redacted.value(server.url).replace(/\/[^/?]+(\?|$)/, `/${db}$1`))

const admin = ManagedRuntime.make(Database.layerFromUrl(server.adminUrl, { migrate: false, maxConnections: 1 }))
const runtimes: Record<
  string,
  ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | BatchCallsRepo | CallsRepo, Database.DatabaseError>
> = {}
for (const name of names) {
  const db = `lifecycle_${name.replace(/-/g, "_")}`
  await admin.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE DATABASE ${db}`)
  }))
  const rt = ManagedRuntime.make(
    Layer.mergeAll(BatchCallsRepo.layer, CallsRepo.layer).pipe(
      Layer.provideMerge(Database.layerFromUrl(urlOf(db), { maxConnections: 2 }))
    )
  )
  await rt.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`
    for (const ddl of variants[name] ?? []) yield* sql.unsafe(ddl)
    if (name === "unregistered") {
      const [fn] = yield* sql<{ def: string }>`SELECT pg_get_functiondef('scheduler_claim'::regproc) AS def`
      const def = fn!.def.replace("WHERE c.state = 'dialling' AND c.attempts = 1", "WHERE false")
      if (def === fn!.def) throw new Error("scheduler_claim: the registering insert was not found")
      yield* sql.unsafe(def)
    }
  }))
  runtimes[name] = rt
}

const FROM = "+14155550100"
let serial = 0
const NOW = 1_790_000_000_000

const roundOf = (name: string) =>
  runtimes[name]!.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const calls = yield* CallsRepo
    const orgId = OrgId.make(`org_lifecycle_${++serial}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
               VALUES (${orgId}, 'lifecycle probe', 100000, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
    const request = Schema.decodeUnknownSync(CreateBatchCallRequest)({
      from_number: FROM,
      tasks: Array.from({ length: taskCount }, (_, i) => ({
        to_number: `+4420${String(serial % 100).padStart(2, "0")}${String(i).padStart(6, "0")}`,
        svc_llm_dynamic_variables: { first_name: `Customer ${i}` }
      }))
    })
    const batch = yield* (yield* BatchCallsRepo).create(orgId, "bench_key", request, {
      maxTasks: taskCount,
      legalGrouper: () => new LegalGrouper()
    }).pipe(
      Effect.orDie
    )
    yield* sql`SELECT pg_stat_statements_reset()`
    const [hot0] = yield* sql<{ upd: number; hot: number }>`
      SELECT sum(n_tup_upd)::float8 AS upd, sum(n_tup_hot_upd)::float8 AS hot FROM pg_stat_user_tables
      WHERE relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'calls'::regclass)`
    let claimMs = 0
    let recordMs = 0
    for (let done = 0; done < taskCount; done += chunk) {
      let t0 = performance.now()
      const rows = yield* sql<{ task_id: string | null; call_id: string | null; to_number: string | null }>`
        SELECT task_id, call_id, to_number FROM scheduler_claim(${ORG_LOCK}::int4, ${orgId}, '250ms',
          ${batch.batch_call_id}, 0::int4, ${chunk}::int4, 'probe', ${
        NOW + 60_000
      }::int8, ${FROM}, ${NOW}::int8, NULL::int4[])`
      claimMs += performance.now() - t0
      const claimed = rows.filter((r) => r.task_id !== null)
      const finished = claimed.map((r) => {
        const call: CallEnded = {
          _tag: "CallEnded",
          idempotency_key: r.task_id!,
          call_id: r.call_id!,
          outcome: "answered",
          start_timestamp: NOW + 1_000,
          end_timestamp: NOW + 61_000,
          duration_ms: 60_000,
          disconnection_reason: "user_hangup",
          analysis: { call_successful: true, interest: 3 }
        }
        return finishedFromCall({
          taskId: r.task_id!,
          orgId,
          batchCallId: batch.batch_call_id,
          fromNumber: FROM,
          toNumber: r.to_number!
        }, call)
      })
      t0 = performance.now()
      yield* calls.recordFinished(finished, NOW + 62_000)
      recordMs += performance.now() - t0
      // the contact feed runs off the dispatch path; keep its queue from growing
      yield* sql`DELETE FROM contact_feed`
    }
    const stats = yield* sql<{ query: string; ms: number; calls: number }>`
      SELECT query, total_exec_time AS ms, calls::float8 AS calls FROM pg_stat_statements
      WHERE query ILIKE '%scheduler_claim%' OR query ILIKE 'WITH r AS%'`
    const [hot1] = yield* sql<{ upd: number; hot: number }>`
      SELECT sum(n_tup_upd)::float8 AS upd, sum(n_tup_hot_upd)::float8 AS hot FROM pg_stat_user_tables
      WHERE relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'calls'::regclass)`
    const pgOf = (pattern: RegExp) => stats.filter((s) => pattern.test(s.query)).reduce((a, s) => a + s.ms, 0)
    return {
      claim: (claimMs * 1000) / taskCount,
      record: (recordMs * 1000) / taskCount,
      pgClaim: (pgOf(/scheduler_claim/) * 1000) / taskCount,
      pgRecord: (pgOf(/^WITH r AS/) * 1000) / taskCount,
      // statistics arrive asynchronously; a share, for the record's updates
      hot: hot1 && hot0 && hot1.upd > hot0.upd ? (hot1.hot - hot0.hot) / (hot1.upd - hot0.upd) : Number.NaN
    }
  }))

const results: Record<string, Array<Awaited<ReturnType<typeof roundOf>>>> = {}
// a warm-up round each, not counted
for (const name of names) await roundOf(name)
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? names : [...names].reverse()
  for (const name of order) (results[name] ??= []).push(await roundOf(name))
  process.stderr.write(`round ${r + 1}/${rounds} done\n`)
}

const f = (v: number) => v.toFixed(1)
const print = (line: string) => process.stdout.write(line + "\n")
print(
  `\ncalls lifecycle, ${taskCount} tasks a round in chunks of ${chunk}, medians of ${rounds} rounds (µs/task)\n`
)
print("| variant | claim | record | claim + record | PostgreSQL: claim | record | HOT share of calls updates |")
print("|---|---:|---:|---:|---:|---:|---:|")
for (const name of names) {
  const rs = results[name]!
  const m = (k: keyof (typeof rs)[number]) => median(rs.map((x) => x[k]))
  print(
    `| ${name} | ${f(m("claim"))} | ${f(m("record"))} | ${f(median(rs.map((x) => x.claim + x.record)))} | ${
      f(m("pgClaim"))
    } | ${f(m("pgRecord"))} | ${m("hot").toFixed(2)} |`
  )
}

for (const rt of Object.values(runtimes)) await rt.dispose()
await admin.dispose()
await Effect.runPromise(Scope.close(scope, Exit.void))
if (process.env["BENCH_EXPLAIN"]) fs.cpSync(dataDir, `${dataDir}-kept`, { recursive: true })
fs.rmSync(dataDir, { recursive: true, force: true })
