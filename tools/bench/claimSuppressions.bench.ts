// The claim's cost with a 10,000,000-number suppression list (issue 31 item 5: "the claim's cost grows by <= 5 %
// with a 10M list"; decision 0550), beside the same claim with no list, in the same run.
//
//   node tools/bench/claimSuppressions.bench.ts [--rounds=7] [--tasks=5000]
//     CLAIM_BENCH_LIST=n (default 10,000,000)
//
// Each round drains a fresh batch of the same `tasks` numbers through `DispatchRepo.claim` (scheduler_claim under the
// org's lock, what the dispatcher calls; 100 tasks a claim, the dispatcher's default maxPerBatch; the org's limit
// above the batch so slots never bind), on three sides, in rotating order:
// - no list: an org in a database whose suppression table is empty (the claim before any list existed);
// - 10M list: an org whose list holds CLAIM_BENCH_LIST numbers spread over the NANP space, in a second database of
//   the same server; 10 of the batch's numbers are on it on purpose and a few more by chance (those tasks end skipped
//   as suppressed), every other task costs one probe of the list's primary key;
// - no list, beside a 10M list: an org without a list in the second database (another org's list is in the table).
// The cost is the time of the claims that drain the batch, per claim (100 tasks). Between rounds the claimed tasks
// are set completed (untimed), so the org's in-flight count, which each claim reads, starts at 0 each round. Medians
// over the rounds. Embedded PostgreSQL with svc's own settings (npm start's) in a temporary directory, removed at the
// end. Prints a Markdown table; the exit code is 0 either way (a loaded machine is not a regression).
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { argument, gitCommit, median } from "./support/BenchSupport.ts"

const ROUNDS = argument("rounds", 7)
const TASKS = argument("tasks", 5_000)
const LIST = Number(process.env["CLAIM_BENCH_LIST"] ?? 10_000_000)
const SUPPRESSED_IN_BATCH = 10
const PER_CLAIM = 100
const GOAL = 1.05

const log = (line: string) => process.stderr.write(`${line}\n`)
const commit = gitCommit()

// the batch's numbers: +1212 and seven digits; SUPPRESSED_IN_BATCH of them are put on the list on purpose
const batchNumbers = Array.from({ length: TASKS }, (_, i) => `+1212${String(5_000_000 + i).padStart(7, "0")}`)
const suppressedInBatch = batchNumbers.filter((_, i) => i % Math.floor(TASKS / SUPPRESSED_IN_BATCH) === 7)
  .slice(0, SUPPRESSED_IN_BATCH)

const loadAtStart = os.loadavg()
const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-claim-suppressions-"))
fs.chmodSync(dataDir, 0o755)
const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir, database: "plain" }), scope))
const urlOf = (database: string) => {
  const parsed = new URL(Redacted.value(server.adminUrl))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}
await Effect.runPromise(DatabaseAdmin.ensureDatabase(server.adminUrl, "listed"))

const runtimeOf = (database: string) =>
  ManagedRuntime.make(
    Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer).pipe(
      Layer.provideMerge(Database.layerFromUrl(urlOf(database), { maxConnections: 4 }))
    )
  )
const plainDb = runtimeOf("plain")
const listedDb = runtimeOf("listed")

const addOrg = (org: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
      VALUES (${org}, ${org}, ${TASKS + 100}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org}, '+14155550100', 0)`
  })

const loadList = (org: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // 2654435761 is odd and not a multiple of 5: k -> k * A mod 8e9 is a bijection, so the numbers are distinct
    const step = 1_000_000
    for (let from = 0; from < LIST; from += step) {
      // as the import writes (decision 0550): in key order, the org's row locked once instead of a check per row
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM orgs WHERE org_id = ${org} FOR KEY SHARE`
        yield* sql`SET LOCAL session_replication_role = replica`
        yield* sql`
          INSERT INTO suppressions (org_id, phone_number, source, created_timestamp)
          SELECT ${org}, n, 'national_dnc', 0 FROM (
            SELECT '+1' || (2000000000 + (k * 2654435761 + 12345) % 8000000000)::text AS n
            FROM generate_series(${from}::int8, ${Math.min(LIST, from + step) - 1}::int8) k
          ) g ORDER BY n
          ON CONFLICT DO NOTHING`
      }))
      log(`list: ${Math.min(LIST, from + step)} / ${LIST}`)
    }
    for (const n of suppressedInBatch) {
      yield* sql`INSERT INTO suppressions (org_id, phone_number, source, created_timestamp)
        VALUES (${org}, ${n}, 'api', 0) ON CONFLICT DO NOTHING`
    }
    yield* sql`VACUUM (ANALYZE) suppressions`
    const [row] = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM suppressions WHERE org_id = ${org}`
    // the list's numbers are spread over the whole NANP space: a few fall on the batch's by chance
    const [hit] = yield* sql<{ n: number }>`SELECT count(*)::int4 AS n FROM suppressions
      WHERE org_id = ${org} AND phone_number = ANY(${batchNumbers}::text[])`
    return { listed: Number(row!.n), inBatch: hit!.n }
  })

/** A fresh batch of the org's, drained by claims: the time spent in the claims, and what they did. */
const drain = (orgId: OrgId) =>
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
      { maxTasks: TASKS, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    // the batch is due from its creation (the live clock's): claims run a minute on
    const now = Date.now() + 60_000
    const due = (yield* repo.findDue(now, 1_000)).due.filter((b) => b.batchCallId === batch.batch_call_id)
    if (due.length !== 1) throw new Error(`batch ${batch.batch_call_id} not due`)
    let ms = 0
    let claims = 0
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
      claims++
      claimed += result.claimed.length
      suppressed += result.suppressed
      if (!result.busy && result.claimed.length + result.skipped + result.deferred === 0) break
    }
    // untimed: the next round starts with nothing in flight
    yield* sql`UPDATE batch_call_tasks SET state = 'completed' WHERE batch_call_id = ${batch.batch_call_id}
      AND state = 'dialling'`
    return { perClaim: ms / claims, claimed, suppressed }
  })

const SIDES = [
  { name: "no list", db: plainDb, org: OrgId.make("org_plain") },
  { name: "10M list", db: listedDb, org: OrgId.make("org_listed") },
  { name: "no list, beside a 10M list", db: listedDb, org: OrgId.make("org_beside") }
] as const

const main = async () => {
  log(`tasks ${TASKS}, list ${LIST}, rounds ${ROUNDS}; load ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}`)
  await plainDb.runPromise(addOrg("org_plain"))
  await listedDb.runPromise(Effect.all([addOrg("org_listed"), addOrg("org_beside")]))
  const started = performance.now()
  const { inBatch, listed } = await listedDb.runPromise(loadList("org_listed"))
  log(`list of ${listed} numbers in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  const times: Array<Array<number>> = SIDES.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < SIDES.length; k++) {
      const i = (round + k) % SIDES.length
      const side = SIDES[i]!
      const result = await side.db.runPromise(drain(side.org))
      const expected = side.org === "org_listed" ? inBatch : 0
      if (result.suppressed !== expected || result.claimed !== TASKS - expected) {
        throw new Error(`${side.name}: claimed ${result.claimed}, suppressed ${result.suppressed}`)
      }
      times[i]!.push(result.perClaim)
    }
    log(`round ${round + 1}: ${SIDES.map((s, i) => `${s.name} ${times[i]!.at(-1)!.toFixed(2)} ms`).join(", ")}`)
  }
  const medians = times.map(median)
  const base = medians[0]!
  const fmt = (values: ReadonlyArray<number>) => values.map((v) => v.toFixed(2)).join(", ")
  // each round's sides ran back to back: the median of the rounds' own ratios is less moved by the load's drift
  const paired = (side: number) => median(times[side]!.map((t, round) => t / times[0]![round]!))
  const row = (label: string, side: number) =>
    `| ${label} | ${medians[side]!.toFixed(2)} | ${(medians[side]! / base).toFixed(3)}x | ${
      paired(side).toFixed(3)
    }x | ${fmt(times[side]!)} |`
  const met = medians[1]! / base <= GOAL && paired(1) <= GOAL
  const lines = [
    `| claim of ${PER_CLAIM} tasks, ${TASKS.toLocaleString("en-US")}-task batch, ${ROUNDS} rounds | ` +
    "median ms per claim | ratio of the medians | median of the rounds' ratios | all rounds |",
    "| --- | ---: | ---: | ---: | --- |",
    row("no list (an empty suppression table)", 0),
    row(`${listed.toLocaleString("en-US")}-number list, ${inBatch} of the batch on it`, 1),
    row(`no list, another org's ${listed.toLocaleString("en-US")}-number list in the table`, 2),
    "",
    `Goal: the 10M list's claim <= ${GOAL}x the claim with no list (both ratios): ${met ? "met" : "NOT met"}. ` +
    `Commit ${commit}, ${new Date().toISOString().slice(0, 10)}; load average at start ${
      loadAtStart.map((l) => l.toFixed(2)).join(" ")
    }, at end ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}; ${os.cpus().length} CPUs`
  ]
  process.stdout.write(lines.join("\n") + "\n")
}

try {
  await main()
} finally {
  await plainDb.dispose()
  await listedDb.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
