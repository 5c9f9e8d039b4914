// Partitioned history (issue 30 item 4; decision 0442): what calls' month partitions cost the hot paths and what
// retention by dropping a month costs, side by side with the table as it was, in one run.
//
//   node tools/bench/partitions.bench.ts [--rounds=7] [--reps=15] [--calls=1000000] [--tasks=2000] [--drop=10000000]
//
// One embedded PostgreSQL (the list-calls bench's settings), four databases:
// - before: migrations up to 0034 and today's functions: `calls` one plain table (the release before 0035);
// - single: every migration and no retention (the default): `calls` partitioned, its one partition the DEFAULT one;
// - parted: every migration; calls' month partitions maintained as the scheduler does with SVC_RETENTION_CALLS_DAYS=90
//   (the DEFAULT partition, empty here, and six months: three of history, the current one, two ahead);
// - drop: every migration, one month partition holding `drop` calls (seeded by generate_series into the partition
//   before it is attached, not through the API), dropped by `HistoryPartitions.maintain` when it passes the retention.
// before, single and parted hold the same `calls` calls of org-a over 90 days (one every 90 days / calls, dialled-looking:
// sort_timestamp = recorded_timestamp) plus 20 orgs of 10,000.
//
// Each round, in alternating order: the list-calls requests through `CallsApiRepo.list` (`reps` times each, on a pool
// with named statements as `DATABASE_POOL_MODE=session` runs, and on one with unnamed statements as behind a
// transaction pooler, where each statement is planned every time), and a batch of `tasks` tasks drained through
// `DispatchRepo.claim` (100 a claim) and finished through `CallsRepo.recordFinished` (100 a statement), on each side.
// Medians over the rounds of the per-round medians; ratios single / before and parted / before, also as the median
// of the rounds' own ratios. While retention drops the month, a reader of `calls` (another connection, one indexed
// row of another org every 2 ms) records its longest wait: what the drop costs everyone else. Prints Markdown; exit code 0 either way (a loaded machine is not a regression).
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import * as Outcome from "@svc/domain/dispatch/Outcome.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { ListCallsBody } from "@svc/domain/models/Call.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { CallsApiRepo, listStatements } from "@svc/store/calls/CallsApiRepo.ts"
import { CallsRepo, type FinishedTask } from "@svc/store/calls/CallsRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import * as Migrations from "@svc/store/db/Migrations.ts"
import { DispatchRepo } from "@svc/store/dispatch/DispatchRepo.ts"
import { CALLS, HistoryPartitions, monthName } from "@svc/store/partitions/HistoryPartitions.ts"
import { Effect, Exit, Fiber, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { argument, gitCommit, HISTORY_SETTINGS, median } from "./support/BenchSupport.ts"

const ROUNDS = argument("rounds", 7)
const REPS = argument("reps", 15)
const CALLS_A = argument("calls", 1_000_000)
const TASKS = argument("tasks", 2_000)
const DROP = argument("drop", 10_000_000)
const OTHER_ORGS = 20
const OTHER = 10_000
const ORG = OrgId.make("org-a")
const DAY = 86_400_000
const RETENTION = 90 * DAY
/** The bench's present: 15 March 2027 (claims register their calls at this time). */
const NOW = Date.UTC(2027, 2, 15, 12)
const SEED_FROM = NOW - RETENTION
const PER_CLAIM = 100
const GOAL = 1.05

const SETTINGS = HISTORY_SETTINGS

const log = (line: string) => process.stderr.write(`${line}\n`)
const commit = gitCommit()
const decode = Schema.decodeUnknownSync(ListCallsBody)
const loadAtStart = os.loadavg()

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-partitions-"))
fs.chmodSync(dataDir, 0o755)
const server = await Effect.runPromise(
  Scope.provide(EmbeddedPostgres.start({ dataDir, database: "before", settings: SETTINGS }), scope)
)
const urlOf = (database: string) => {
  const parsed = new URL(Redacted.value(server.adminUrl))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}
for (const name of ["single", "parted", "drop"]) {
  await Effect.runPromise(DatabaseAdmin.ensureDatabase(server.adminUrl, name))
}

/** Runs `effect` once on a short-lived pool of `database`. */
const once = <A, E>(database: string, effect: Effect.Effect<A, E, SqlClient.SqlClient | HistoryPartitions>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      HistoryPartitions.layer.pipe(
        Layer.provideMerge(Database.layerFromUrl(urlOf(database), { migrate: false, maxConnections: 2 }))
      )
    )
    return yield* Effect.provideContext(effect, context)
  })))

// ---------------------------------------------------------------------------------------------------------------
// 1. Schemas: the release before 0035, and the current one
// ---------------------------------------------------------------------------------------------------------------
await once(
  "before",
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const loader = Effect.map(Migrations.all, (all) => all.filter(([id]) => id < 35))
    const migrate = Migrator.make({})({ loader, table: "svc_migrations" })
    yield* sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(${0x5356_4d31})`, migrate))
    for (const fn of yield* Migrations.functions) yield* Migrations.createFunction(fn.name)
  })
)
for (const name of ["single", "parted", "drop"]) await once(name, Migrations.run)
// parted: maintained as from a month before the history, so its months exist when the calls are recorded; then as
// of NOW with the 90-day retention (nothing to drop yet: the oldest month ends after NOW - 90 days)
await once(
  "parted",
  Effect.gen(function*() {
    const partitions = yield* HistoryPartitions
    yield* partitions.maintain(CALLS, SEED_FROM - 25 * DAY, {
      retentionMs: RETENTION,
      aheadMonths: 6,
      lockTimeoutMs: 10_000
    })
    return yield* partitions.maintain(CALLS, NOW, { retentionMs: RETENTION, aheadMonths: 2, lockTimeoutMs: 10_000 })
  })
)

// ---------------------------------------------------------------------------------------------------------------
// 2. The same calls in before and parted
// ---------------------------------------------------------------------------------------------------------------
/** `n` calls of `org` from SEED_FROM to NOW, as the claim registers them and the recorder finishes them. */
const seedCalls = (org: string, n: number, seed: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const u = (k: number) => sql.literal(`((hashint8extended(i, ${seed * 16 + k}) & 4294967295)::float8 / 4294967296)`)
    yield* sql`
      INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${org}, ${org}, ${TASKS + 100}, 0)
      ON CONFLICT DO NOTHING`
    yield* sql`
      INSERT INTO calls (org_id, call_id, task_id, batch_call_id, from_number, to_number, agent_id, agent_version,
        call_status, outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis, metadata,
        dynamic_variables, recorded_timestamp, registered_timestamp)
      SELECT ${org}, 'call_' || md5(${org} || ':' || i), i, ${org} || '_batch_' || (i / 1000), '+16505550000',
        '+1415' || lpad(floor(${u(1)} * 300000)::int8::text, 7, '0'), 'agent_' || floor(${u(2)} * 10)::int, 1,
        CASE WHEN ${u(3)} < 0.72 THEN 'ended' ELSE 'not_connected' END,
        CASE WHEN ${u(3)} < 0.72 THEN 'answered' ELSE 'no_answer' END,
        CASE WHEN ${u(3)} < 0.72 THEN 'user_hangup' ELSE 'dial_no_answer' END,
        at + 8000, at + 68000, 60000,
        CASE WHEN ${u(3)} < 0.72 THEN jsonb_build_object('call_successful', ${u(4)} < 0.4, 'user_sentiment', 'Positive',
          'call_summary', 'The customer asked about the offer.') ELSE '{}'::jsonb END,
        CASE WHEN ${u(5)} < 0.3 THEN jsonb_build_object('campaign', 'spring') END,
        jsonb_build_object('first_name', 'Ann'), at, at
      FROM (
        SELECT i, ${SEED_FROM}::int8 + (i * ${RETENTION}::int8) / ${n}::int8 AS at
        FROM generate_series(0::int8, ${n - 1}::int8) i
      ) s`
  }).pipe(Effect.orDie)

const seedStarted = performance.now()
for (const name of ["before", "single", "parted"]) {
  await once(
    name,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* seedCalls(ORG, CALLS_A, 1)
      for (let k = 0; k < OTHER_ORGS; k++) yield* seedCalls(`org-${k}`, OTHER, 2 + k)
      yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${ORG}, '+14155550100', 0)`
      yield* sql`VACUUM ANALYZE calls`
      yield* sql.unsafe(`VACUUM ANALYZE ${name === "before" ? "calls" : "calls_legacy"}`)
    })
  )
  log(
    `${name}: seeded ${CALLS_A + OTHER_ORGS * OTHER} calls (${((performance.now() - seedStarted) / 1000).toFixed(0)} s)`
  )
}
const partedParts = await once(
  "parted",
  Effect.gen(function*() {
    const partitions = yield* HistoryPartitions
    return (yield* partitions.state(CALLS)).months.map((m) => m.name)
  })
)
log(`parted: calls_legacy (default) + ${partedParts.join(", ")}`)

// ---------------------------------------------------------------------------------------------------------------
// 3. The hot paths, side by side
// ---------------------------------------------------------------------------------------------------------------
const runtimeOf = (database: string, poolMode: Database.PoolMode) =>
  ManagedRuntime.make(
    Layer.mergeAll(CallsApiRepo.layer, BatchCallsRepo.layer, DispatchRepo.layer, CallsRepo.layer).pipe(
      Layer.provideMerge(CursorKeys.layer),
      Layer.provideMerge(Database.layerFromUrl(urlOf(database), { migrate: false, maxConnections: 4, poolMode }))
    )
  )
const SIDES = ["before", "single", "parted"] as const
const runtimes = {
  session: {
    before: runtimeOf("before", "session"),
    single: runtimeOf("single", "session"),
    parted: runtimeOf("parted", "session")
  },
  unnamed: {
    before: runtimeOf("before", "transaction"),
    single: runtimeOf("single", "transaction"),
    parted: runtimeOf("parted", "transaction")
  }
}

/** A cursor deep in org-a's list: the key page 50 hands out, read once on each side. */
const deepKey = async (side: typeof SIDES[number]) =>
  runtimes.session[side].runPromise(Effect.gen(function*() {
    const api = yield* CallsApiRepo
    let key: string | undefined
    for (let page = 0; page < 50; page++) {
      const result = yield* api.list(ORG, decode({ limit: 100, ...(key === undefined ? {} : { pagination_key: key }) }))
      key = result.pagination_key
    }
    return key!
  }))
const deep = { before: await deepKey("before"), single: await deepKey("single"), parted: await deepKey("parted") }

const LISTS: ReadonlyArray<{ readonly label: string; readonly body: (side: typeof SIDES[number]) => unknown }> = [
  { label: "first page, newest first", body: () => ({ limit: 100 }) },
  { label: "page 51 (cursor), newest first", body: (side) => ({ limit: 100, pagination_key: deep[side] }) },
  { label: "first page, oldest first", body: () => ({ limit: 100, sort_order: "ascending" }) },
  {
    label: "a batch of 1,000, first page + include_total",
    body: () => ({
      limit: 100,
      include_total: true,
      filter_criteria: { batch_call_id: { type: "string", value: `${ORG}_batch_500` } }
    })
  },
  {
    label: "one to_number, first page",
    body: () => ({ limit: 100, filter_criteria: { to_number: { type: "string", value: "+14150012345" } } })
  }
]

/** The plan of a list request's page statement on parted, as its node types (what the report shows). */
const planOf = (body: unknown) =>
  runtimes.unnamed.parted.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const statements = listStatements(ORG, decode(body), undefined)
      const rows = yield* sql.unsafe<{ "QUERY PLAN": string }>(
        `EXPLAIN (COSTS OFF) ${statements.page.text}`,
        statements.page.params as Array<never>
      ).unprepared
      return rows.map((r) => r["QUERY PLAN"].trim().replace(/^-> +/, "").split(" on ")[0]!.split(" using ")[0]!)
        .filter((line) => /^[A-Z]/.test(line) && !/^(Index Cond|Filter|Sort Key|Recheck)/.test(line))
        .reduce<Array<string>>((nodes, node) => nodes.includes(node) ? nodes : [...nodes, node], [])
        .join(" > ")
    }).pipe(Effect.orDie)
  )

/** The median ms of `reps` list requests. */
const timeList = (mode: keyof typeof runtimes, side: typeof SIDES[number], body: unknown) =>
  runtimes[mode][side].runPromise(
    Effect.gen(function*() {
      const api = yield* CallsApiRepo
      const request = decode(body)
      const times: Array<number> = []
      for (let i = 0; i < REPS; i++) {
        const started = performance.now()
        yield* api.list(ORG, request)
        times.push(performance.now() - started)
      }
      return median(times)
    }).pipe(Effect.orDie)
  )

const numbers = Array.from({ length: TASKS }, (_, i) => `+1212${String(5_000_000 + i).padStart(7, "0")}`)

/** A fresh batch drained by claims at NOW, then finished: ms per claim and per recording statement. */
const drain = (side: typeof SIDES[number]) =>
  runtimes.session[side].runPromise(Effect.gen(function*() {
    const batches = yield* BatchCallsRepo
    const repo = yield* DispatchRepo
    const calls = yield* CallsRepo
    const batch = yield* batches.create(
      ORG,
      "bench",
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: "+14155550100",
        tasks: numbers.map((to_number) => ({ to_number }))
      }),
      { maxTasks: TASKS, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    const due = (yield* repo.findDue(NOW, 1_000)).due.filter((b) => b.batchCallId === batch.batch_call_id)
    if (due.length !== 1) throw new Error(`${side}: batch ${batch.batch_call_id} not due`)
    let claimMs = 0
    let claims = 0
    const claimed: Array<FinishedTask> = []
    for (let n = 0; n < 10_000; n++) {
      const started = performance.now()
      const result = yield* repo.claim(ORG, due, { owner: "bench", now: NOW, leaseMs: 600_000, maxPerBatch: PER_CLAIM })
      claimMs += performance.now() - started
      claims++
      for (const task of result.claimed) {
        const call = {
          _tag: "CallEnded" as const,
          idempotency_key: task.taskId,
          call_id: task.request.call_id,
          outcome: "answered" as const,
          start_timestamp: NOW + 5_000,
          end_timestamp: NOW + 65_000,
          duration_ms: 60_000,
          disconnection_reason: "user_hangup",
          analysis: { call_successful: true, call_summary: "ok" }
        }
        claimed.push({
          taskId: task.taskId,
          orgId: ORG,
          batchCallId: batch.batch_call_id,
          fromNumber: "+14155550100",
          toNumber: task.request.to_number,
          ...Outcome.finishOf(call),
          call
        })
      }
      if (!result.busy && result.claimed.length + result.skipped + result.deferred === 0) break
    }
    if (claimed.length !== TASKS) throw new Error(`${side}: claimed ${claimed.length} of ${TASKS}`)
    let recordMs = 0
    let records = 0
    for (let i = 0; i < claimed.length; i += PER_CLAIM) {
      const started = performance.now()
      const done = yield* calls.recordFinished(claimed.slice(i, i + PER_CLAIM), NOW + 70_000)
      recordMs += performance.now() - started
      records++
      if (done.finished !== Math.min(PER_CLAIM, claimed.length - i)) throw new Error(`${side}: record ${done.finished}`)
    }
    return { claim: claimMs / claims, record: recordMs / records }
  }))

const plans: Array<string> = []
for (const list of LISTS) {
  if (list.label.startsWith("page 51")) continue
  plans.push(`${list.label}: ${await planOf(list.body("parted"))}`)
}

type Series = Record<string, Record<typeof SIDES[number], Array<number>>>
const series: Series = {}
const add = (label: string, side: typeof SIDES[number], value: number) => {
  series[label] ??= { before: [], single: [], parted: [] }
  series[label][side].push(value)
}

for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? SIDES : ([...SIDES].reverse() as unknown as typeof SIDES)
  for (const side of order) {
    for (const mode of ["session", "unnamed"] as const) {
      for (const list of LISTS) {
        add(`list-calls, ${list.label} (${mode})`, side, await timeList(mode, side, list.body(side)))
      }
    }
    const dispatched = await drain(side)
    add(`claim of ${PER_CLAIM} (scheduler_claim)`, side, dispatched.claim)
    add(`finish of ${PER_CLAIM} (recordFinished)`, side, dispatched.record)
  }
  log(`round ${round + 1}/${ROUNDS} done`)
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Dropping a month of DROP calls
// ---------------------------------------------------------------------------------------------------------------
const DROP_MONTH = Date.UTC(2026, 11, 1)
const dropResult = await once(
  "drop",
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const partitions = yield* HistoryPartitions
    const name = monthName(CALLS, DROP_MONTH)
    const next = Date.UTC(2027, 0, 1)
    // the boundary as maintain sets it (the default partition is empty: validated at once), then the month built
    // as maintain builds one, but loaded before its indexes and its attach
    yield* sql.unsafe(`ALTER TABLE calls_legacy ADD CONSTRAINT calls_legacy_before_months
      CHECK (recorded_timestamp < ${DROP_MONTH})`)
    yield* sql.unsafe(`CREATE TABLE ${name} (LIKE calls INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING CONSTRAINTS)
      WITH (${CALLS.storage})`)
    const loadStarted = performance.now()
    yield* sql.unsafe(`
      INSERT INTO ${name} (org_id, call_seq, call_id, task_id, batch_call_id, from_number, to_number, agent_id,
        agent_version, call_status, outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms,
        analysis, recorded_timestamp, registered_timestamp)
      SELECT 'org-' || (i % 50), i, 'call_' || md5('drop:' || i), i, 'batch_' || (i / 1000), '+16505550000',
        '+1415' || lpad((i % 300000)::text, 7, '0'), 'agent_' || (i % 10), 1, 'ended', 'answered', 'user_hangup',
        at + 8000, at + 68000, 60000,
        '{"call_successful": true, "call_summary": "The customer asked about the offer."}'::jsonb, at, at
      FROM (SELECT i, ${DROP_MONTH}::int8 + (i * ${next - DROP_MONTH}::int8) / ${DROP}::int8 AS at
            FROM generate_series(0::int8, ${DROP - 1}::int8) i) s`)
    for (const index of CALLS.indexes) {
      yield* sql.unsafe(
        `CREATE ${index.unique ? "UNIQUE " : ""}INDEX ${name}_${index.suffix} ON ${name} ${index.definition}`
      )
    }
    yield* sql.unsafe(`ALTER TABLE calls ATTACH PARTITION ${name} FOR VALUES FROM (${DROP_MONTH}) TO (${next})`)
    yield* sql.unsafe(`VACUUM ANALYZE ${name}`)
    const loadMs = performance.now() - loadStarted
    const [size] = yield* sql<{ rows: string; bytes: string }>`
      SELECT (SELECT count(*) FROM calls)::text AS rows, pg_total_relation_size(${name}::regclass)::text AS bytes`
    // one round with the months ahead made and nothing old enough, then the round a day later that drops the month
    const lastDay = next + RETENTION - DAY
    yield* partitions.maintain(CALLS, lastDay, { retentionMs: RETENTION, aheadMonths: 2, lockTimeoutMs: 2_000 })
    // the reader: another org's calls by its list index, on the pool's other connection, until the drop is done
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES ('reader', 'reader', 1, 0)`
    yield* sql`
      INSERT INTO calls (org_id, call_id, task_id, batch_call_id, from_number, to_number, agent_id, agent_version,
        call_status, outcome, disconnection_reason, start_timestamp, end_timestamp, duration_ms, analysis,
        recorded_timestamp, registered_timestamp)
      VALUES ('reader', 'call_reader', 1, 'batch_reader', '+16505550000', '+14155550000', 'agent_0', 1, 'ended',
        'answered', 'user_hangup', ${next}, ${next + 60_000}, 60000, '{}'::jsonb, ${next}, ${next})`
    let dropping = true
    const waits: Array<number> = []
    const reader = yield* Effect.forkChild(Effect.gen(function*() {
      while (dropping) {
        const at = performance.now()
        yield* sql`SELECT call_id FROM calls WHERE org_id = 'reader' ORDER BY sort_timestamp DESC LIMIT 1`
        waits.push(performance.now() - at)
        yield* Effect.sleep("2 millis")
      }
    }))
    yield* Effect.sleep("100 millis")
    const started = performance.now()
    const result = yield* partitions.maintain(CALLS, lastDay + DAY, {
      retentionMs: RETENTION,
      aheadMonths: 2,
      lockTimeoutMs: 2_000
    })
    const dropMs = performance.now() - started
    yield* Effect.sleep("100 millis")
    dropping = false
    yield* Fiber.join(reader)
    const [left] = yield* sql<{ rows: string }>`SELECT count(*)::text AS rows FROM calls`
    return {
      name,
      loadMs,
      rows: Number(size!.rows),
      bytes: Number(size!.bytes),
      dropMs,
      readerMaxMs: Math.max(...waits),
      readerMedianMs: median(waits),
      reads: waits.length,
      result,
      left: Number(left!.rows)
    }
  })
)
log(`drop: ${JSON.stringify(dropResult)}`)

// ---------------------------------------------------------------------------------------------------------------
// 5. Report
// ---------------------------------------------------------------------------------------------------------------
const fmt = (v: number) => (v >= 10 ? v.toFixed(1) : v.toFixed(2))
const lines = [
  `Partitioned history bench (commit ${commit}, ${new Date().toISOString()}): org-a ${
    CALLS_A.toLocaleString("en-US")
  } calls over 90 days + ${OTHER_ORGS} orgs of ${
    OTHER.toLocaleString("en-US")
  }; parted = calls_legacy (default) + ${partedParts.length} months; ${ROUNDS} rounds x ${REPS} reps; load ${
    loadAtStart.map((l) => l.toFixed(1)).join(" ")
  } -> ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`,
  "",
  `| path | before (one table), median ms | single (no retention), median ms | single / before: ratio of medians, ` +
  `median of rounds' ratios | parted (90 days), median ms | parted / before: ratio of medians, median of ` +
  `rounds' ratios |`,
  "| --- | ---: | ---: | ---: | ---: | ---: |"
]
/** "1.012x, 1.020x (met)" against the goal. */
const ratios = (side: ReadonlyArray<number>, before: ReadonlyArray<number>) => {
  const ofMedians = median(side) / median(before)
  const paired = median(side.map((v, i) => v / before[i]!))
  return `${ofMedians.toFixed(3)}x, ${paired.toFixed(3)}x (${
    ofMedians <= GOAL && paired <= GOAL ? "met" : "**missed**"
  } <= ${GOAL}x)`
}
for (const [label, s] of Object.entries(series)) {
  lines.push(
    `| ${label} | ${fmt(median(s.before))} | ${fmt(median(s.single))} | ${ratios(s.single, s.before)} | ${
      fmt(median(s.parted))
    } | ${ratios(s.parted, s.before)} |`
  )
}
lines.push("", "Plans on parted (unnamed statements, first pages):", "", ...plans.map((p) => `- ${p}`))
lines.push(
  "",
  `Dropping ${dropResult.name} (${dropResult.rows.toLocaleString("en-US")} calls, ${
    (dropResult.bytes / 2 ** 30).toFixed(1)
  } GiB with its indexes; loaded, indexed and attached in ${(dropResult.loadMs / 1000).toFixed(0)} s) through ` +
    `HistoryPartitions.maintain: **${(dropResult.dropMs / 1000).toFixed(3)} s** (goal < 1 s: ${
      dropResult.dropMs < 1000 ? "met" : "**missed**"
    }); dropped ${JSON.stringify(dropResult.result.dropped)}, calls left ${dropResult.left}. A reader of ` +
    `\`calls\` meanwhile (${dropResult.reads} reads): longest wait **${dropResult.readerMaxMs.toFixed(1)} ms**, ` +
    `median ${dropResult.readerMedianMs.toFixed(2)} ms.`
)
process.stdout.write(`${lines.join("\n")}\n`)

for (const mode of Object.values(runtimes)) for (const rt of Object.values(mode)) await rt.dispose()
await Effect.runPromise(Scope.close(scope, Exit.void))
fs.rmSync(dataDir, { recursive: true, force: true })
