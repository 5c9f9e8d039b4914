// The claim's cost with a 10,000,000-number suppression list (issue 31 item 5: "the claim's cost grows by <= 5 %
// with a 10M list"; decision 0550), beside the same claim with no list, in the same run.
//
//   node tools/bench/claimSuppressions.bench.ts [--rounds=7] [--tasks=5000]
//     CLAIM_BENCH_LIST=n (default 10,000,000)
//
// Two orgs on one database, each claiming a fresh batch of the same `tasks` numbers per round through
// `DispatchRepo.claim` (scheduler_claim under the org's lock, what the dispatcher calls; 100 tasks a claim, as the
// dispatcher's default maxPerBatch, the org's limit above the batch so slots never bind):
// - no list: the org has no suppression, so the claim skips the per-task probe (one EXISTS a claim);
// - 10M list: the org's list holds CLAIM_BENCH_LIST numbers spread over the NANP space, 10 of the batch's among
//   them (those tasks end skipped, as suppressed); every other task costs one probe of the list's primary key.
// The cost is the time of the claims that drain a batch, per task claimed or skipped. Between rounds the claimed tasks
// are set completed (untimed) so the org's in-flight count, which each claim reads, starts at 0 each round for both.
// The two alternate which goes first every round; medians over the rounds. Embedded PostgreSQL with svc's own
// settings (npm start's) in a temporary directory, or DATABASE_URL. Prints a Markdown table; the exit code is 0
// either way (a loaded machine is not a regression).
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import * as os from "node:os"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const ROUNDS = argument("rounds", 7)
const TASKS = argument("tasks", 5_000)
const LIST = Number(process.env["CLAIM_BENCH_LIST"] ?? 10_000_000)
const SUPPRESSED_IN_BATCH = 10
const PER_CLAIM = 100
const PLAIN = "org_claim_plain"
const LISTED = "org_claim_listed"
const GOAL = 1.05

const log = (line: string) => process.stderr.write(`${line}\n`)
const commit = (() => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
})()

// the batch's numbers: +1212 and seven digits; the list's: NANP numbers spread over 8e9 by an affine permutation,
// none of them +1212555xxxx... except the SUPPRESSED_IN_BATCH added on purpose
const batchNumbers = Array.from({ length: TASKS }, (_, i) => `+1212${String(5_000_000 + i).padStart(7, "0")}`)
const suppressedInBatch = batchNumbers.filter((_, i) => i % Math.floor(TASKS / SUPPRESSED_IN_BATCH) === 7)
  .slice(0, SUPPRESSED_IN_BATCH)

const loadAtStart = os.loadavg()
const database = await benchDatabase("claim-suppressions")
const runtime = ManagedRuntime.make(
  Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer).pipe(
    Layer.provideMerge(Database.layerFromUrl(database.url, { maxConnections: 4 }))
  )
)
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | BatchCallsRepo | DispatchRepo>) =>
  runtime.runPromise(effect)

const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const org of [PLAIN, LISTED]) {
    yield* sql`DELETE FROM orgs WHERE org_id = ${org}`
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
      VALUES (${org}, ${org}, ${TASKS + 100}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org}, '+14155550100', 0)`
  }
  // 2654435761 is odd and not a multiple of 5: k -> k * A mod 8e9 is a bijection, so the numbers are distinct
  const step = 1_000_000
  for (let from = 0; from < LIST; from += step) {
    yield* sql`
      INSERT INTO suppressions (org_id, phone_number, source, created_timestamp)
      SELECT ${LISTED}, '+1' || (2000000000 + (k * 2654435761 + 12345) % 8000000000)::text, 'national_dnc', 0
      FROM generate_series(${from}::int8, ${Math.min(LIST, from + step) - 1}::int8) k
      ON CONFLICT DO NOTHING`
    log(`list: ${Math.min(LIST, from + step)} / ${LIST}`)
  }
  for (const n of suppressedInBatch) {
    yield* sql`INSERT INTO suppressions (org_id, phone_number, source, created_timestamp)
      VALUES (${LISTED}, ${n}, 'api', 0) ON CONFLICT DO NOTHING`
  }
  yield* sql`VACUUM (ANALYZE) suppressions`
  const [row] = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM suppressions WHERE org_id = ${LISTED}`
  return Number(row!.n)
})

/** A fresh batch of the org's, drained by claims; returns the time spent in the claims and what they did. */
const drain = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const batches = yield* BatchCallsRepo
    const repo = yield* DispatchRepo
    const batch = yield* batches.create(
      orgId,
      "bench",
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: "+14155550100",
        tasks: batchNumbers.map((to_number) => ({ to_number }))
      }),
      { maxTasks: TASKS }
    ).pipe(Effect.orDie)
    // the batch is due from its creation (the live clock's): claims run a minute on
    const now = Date.now() + 60_000
    const due = (yield* repo.look(now, 1_000)).due.filter((b) => b.batchCallId === batch.batch_call_id)
    if (due.length !== 1) throw new Error(`batch ${batch.batch_call_id} not due`)
    let ms = 0
    let claimed = 0
    let suppressed = 0
    for (let n = 0; n < 10_000; n++) {
      const started = performance.now()
      const result = yield* repo.claim(orgId, due, {
        owner: "bench",
        now,
        leaseMs: 600_000,
        maxPerBatch: PER_CLAIM
      })
      ms += performance.now() - started
      claimed += result.claimed.length
      suppressed += result.suppressed
      if (!result.busy && result.claimed.length + result.skipped + result.deferred === 0) break
    }
    // untimed: the next round starts with nothing in flight
    yield* sql`UPDATE batch_call_tasks SET state = 'completed' WHERE batch_call_id = ${batch.batch_call_id}
      AND state = 'dialling'`
    return { ms, claimed, suppressed }
  })

const main = async () => {
  log(`tasks ${TASKS}, list ${LIST}, rounds ${ROUNDS}; load ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}`)
  const started = performance.now()
  const listed = await run(setup)
  log(`list of ${listed} numbers in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  const plain: Array<number> = []
  const withList: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [PLAIN, LISTED] : [LISTED, PLAIN]
    for (const org of order) {
      const result = await run(drain(org))
      const expected = org === PLAIN ? 0 : SUPPRESSED_IN_BATCH
      if (result.suppressed !== expected || result.claimed !== TASKS - expected) {
        throw new Error(`${org}: claimed ${result.claimed}, suppressed ${result.suppressed}`)
      } // per 1,000 tasks claimed or skipped

      ;(org === PLAIN ? plain : withList).push((result.ms / TASKS) * 1000)
    }
    log(`round ${round + 1}: no list ${plain.at(-1)!.toFixed(1)} ms, 10M list ${withList.at(-1)!.toFixed(1)} ms`)
  }
  const a = median(plain)
  const b = median(withList)
  const fmt = (values: ReadonlyArray<number>) => values.map((v) => v.toFixed(1)).join(", ")
  const lines = [
    `| claim, ${
      TASKS.toLocaleString("en-US")
    }-task batch, ${PER_CLAIM} a claim, ${ROUNDS} rounds | median ms per 1,000 tasks | all rounds |`,
    "| --- | ---: | --- |",
    `| no suppression list | ${a.toFixed(1)} | ${fmt(plain)} |`,
    `| ${listed.toLocaleString("en-US")}-number list, ${SUPPRESSED_IN_BATCH} of the batch on it | ${b.toFixed(1)} | ${
      fmt(withList)
    } |`,
    `| ratio list / no list | ${(b / a).toFixed(3)}x | goal <= ${GOAL}x: ${b / a <= GOAL ? "met" : "NOT met"} |`,
    "",
    `Commit ${commit}, ${new Date().toISOString().slice(0, 10)}; load average at start ${
      loadAtStart.map((l) => l.toFixed(2)).join(" ")
    }, at end ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}; ${os.cpus().length} CPUs`
  ]
  process.stdout.write(lines.join("\n") + "\n")
}

try {
  await main()
} finally {
  await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM orgs WHERE org_id IN (${PLAIN}, ${LISTED})`))
    .catch(() => {})
  await runtime.dispose()
  await database.close()
}
