// The webhook outbox partitioned by day, against the one table it is (issue 30 item 4; decision 0442 left it
// unpartitioned "for a change that measures the prune's cost against the claim's"): this bench is that measurement.
//
//   node tools/bench/outboxPartitions.bench.ts [--rounds=7] [--reps=40] [--per-day=1000000] [--pending=3000]
//
// One embedded PostgreSQL (the partitions bench's settings), two databases with every migration:
// - table: `webhook_events` as it is, pruned by the scheduler's `WebhookHousekeeping.round` (deletes of 5,000 finished
//   rows a statement until one comes back short);
// - parted: `webhook_events` rebuilt as `PARTITION BY RANGE (enqueued_at)`, one partition per UTC day, with the same
//   columns, identity and indexes (the primary key gains `enqueued_at`, as a partitioned table requires): the days
//   a 7-day retention keeps (8 of history and today), two ahead and a DEFAULT one, 12 partitions, retention by
//   detaching a day and dropping it in a second transaction (decision 0442's two steps).
// Both hold the same rows: `per-day` finished events on each of two days (8 days ago, the day retention removes,
// and yesterday; 10M calls a month are about 1M events a day at three events a call) and a backlog of `pending`
// events (three per call, 50 orgs) enqueued in the last hour.
//
// Measured, in alternating order each round, through `WebhooksRepo` itself on pools that plan each statement every
// time (unnamed statements, as behind a transaction pooler) and with named statements (DATABASE_POOL_MODE=session):
// - the claim with a backlog: 50 due events taken (then put back due, as a failed attempt is);
// - the claim with nothing due: every pending event leased, so the claim walks the orgs and finds none (what each
//   worker runs every 200 ms while receivers are slow);
// - the claim of an empty outbox (after the rounds: every pending event delivered);
// and once, at the end: retention removing the old day, by deletes on `table` and by a detach and a drop on
// `parted`, with its wall time, its WAL and the longest wait of a claim loop running meanwhile on another connection.
// Prints Markdown; exit code 0 either way (a loaded machine is not a regression).
import * as WebhookHousekeeping from "@svc/scheduler/webhooks/WebhookHousekeeping.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import * as Migrations from "@svc/store/db/Migrations.ts"
import { type AttemptResult, type ClaimOptions, WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { argument, gitCommit, HISTORY_SETTINGS, median } from "./support/BenchSupport.ts"

const ROUNDS = argument("rounds", 7)
const REPS = argument("reps", 40)
const PER_DAY = argument("per-day", 1_000_000)
const PENDING = argument("pending", 3_000)
const ORGS = 50
const DAY = 86_400_000
const RETENTION = 7 * DAY
/** Midnight UTC today: the day partitions' bounds. */
const TODAY = Math.floor(Date.now() / DAY) * DAY
const NOW = TODAY + 12 * 3_600_000
const OLD_DAY = TODAY - 8 * DAY

const log = (line: string) => process.stderr.write(`${line}\n`)
const commit = gitCommit()
const loadAtStart = os.loadavg()

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-outbox-"))
fs.chmodSync(dataDir, 0o755)
const server = await Effect.runPromise(
  Scope.provide(EmbeddedPostgres.start({ dataDir, database: "table", settings: HISTORY_SETTINGS }), scope)
)
const urlOf = (database: string) => {
  const parsed = new URL(Redacted.value(server.adminUrl))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}
await Effect.runPromise(DatabaseAdmin.ensureDatabase(server.adminUrl, "parted"))

const SIDES = ["table", "parted"] as const
type Side = typeof SIDES[number]

/** Runs `effect` once on a short-lived pool of `database`. */
const once = <A, E>(database: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(Database.layerFromUrl(urlOf(database), { migrate: false, maxConnections: 2 }))
    return yield* Effect.provideContext(effect, context)
  })))

for (const side of SIDES) await once(side, Migrations.run)

const dayName = (start: number) => `webhook_events_d${new Date(start).toISOString().slice(0, 10).replaceAll("-", "_")}`
const ts = (ms: number) => new Date(ms).toISOString()

// ---------------------------------------------------------------------------------------------------------------
// 1. parted: the outbox rebuilt by day (empty yet; the indexes as migrations 0013 and 0019 make them)
// ---------------------------------------------------------------------------------------------------------------
const DAYS: ReadonlyArray<number> = Array.from({ length: 11 }, (_, i) => TODAY - 8 * DAY + i * DAY)
await once(
  "parted",
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE webhook_events RENAME TO webhook_events_flat`
    yield* sql`
      CREATE TABLE webhook_events (LIKE webhook_events_flat INCLUDING DEFAULTS INCLUDING CONSTRAINTS
        INCLUDING IDENTITY) PARTITION BY RANGE (enqueued_at)`
    yield* sql`DROP TABLE webhook_events_flat`
    yield* sql`ALTER TABLE webhook_events ADD PRIMARY KEY (event_seq, enqueued_at)`
    yield* sql`CREATE INDEX webhook_events_due ON webhook_events (org_id, due_at) WHERE state = 'pending'`
    yield* sql`
      CREATE INDEX webhook_events_pending_call ON webhook_events (call_id, event_seq) WHERE state = 'pending'`
    yield* sql`CREATE INDEX webhook_events_call ON webhook_events (org_id, call_id, event_seq)`
    yield* sql`
      CREATE INDEX webhook_events_enqueued ON webhook_events USING brin (enqueued_at) WITH (autosummarize = on)`
    yield* sql.unsafe(`CREATE TABLE webhook_events_default PARTITION OF webhook_events DEFAULT`)
    for (const start of DAYS) {
      yield* sql.unsafe(
        `CREATE TABLE ${dayName(start)} PARTITION OF webhook_events
         FOR VALUES FROM ('${ts(start)}') TO ('${ts(start + DAY)}')`
      )
    }
  }).pipe(Effect.orDie)
)

// ---------------------------------------------------------------------------------------------------------------
// 2. The same rows on both sides
// ---------------------------------------------------------------------------------------------------------------
/** `n` finished events enqueued over the day from `start`, three per call, each delivered a second later. */
const seedDay = (start: number, n: number, salt: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body, state, enqueued_at,
        due_at, first_attempt_at, attempts, last_status, history, finished_at)
      SELECT 'evt_' || md5(${salt} || i), 'org-' || (i % ${ORGS}), 'call_' || md5(${salt} || (i / 3)),
        (ARRAY['call_started', 'call_ended', 'call_analyzed'])[i % 3 + 1], 'https://hooks.example.com/svc', 10000,
        repeat('x', 600), 'delivered', to_timestamp((${start}::int8 + i * ${DAY}::int8 / ${n}::int8) / 1000.0),
        0, ${start}::int8 + i * ${DAY}::int8 / ${n}::int8, 1, 200,
        jsonb_build_array(jsonb_build_object('at', ${start}::int8 + i * ${DAY}::int8 / ${n}::int8, 'status', 200,
          'ms', 80)),
        ${start}::int8 + i * ${DAY}::int8 / ${n}::int8 + 1000
      FROM generate_series(0::int8, ${n - 1}::int8) i`
  }).pipe(Effect.orDie)

/** The backlog: `n` pending events, three per call, over the last hour, due at once. */
const seedPending = (n: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO webhook_events (event_id, org_id, call_id, event, url, timeout_ms, body, enqueued_at)
      SELECT 'evt_' || md5('p' || i), 'org-' || ((i / 3) % ${ORGS}), 'call_' || md5('p' || (i / 3)),
        (ARRAY['call_started', 'call_ended', 'call_analyzed'])[i % 3 + 1], 'https://hooks.example.com/svc', 10000,
        repeat('x', 600), to_timestamp((${NOW - 3_600_000}::int8 + i * 1000) / 1000.0)
      FROM generate_series(0::int8, ${n - 1}::int8) i`
  }).pipe(Effect.orDie)

const seedStarted = performance.now()
for (const side of SIDES) {
  await once(
    side,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* seedDay(OLD_DAY, PER_DAY, "old")
      yield* seedDay(TODAY - DAY, PER_DAY, "new")
      yield* seedPending(PENDING)
      yield* sql`VACUUM ANALYZE webhook_events`
    })
  )
  log(`${side}: seeded ${2 * PER_DAY + PENDING} events (${((performance.now() - seedStarted) / 1000).toFixed(0)} s)`)
}

// ---------------------------------------------------------------------------------------------------------------
// 3. The claim, side by side
// ---------------------------------------------------------------------------------------------------------------
const runtimeOf = (database: string, poolMode: Database.PoolMode) =>
  ManagedRuntime.make(
    WebhooksRepo.layer.pipe(
      Layer.provideMerge(Database.layerFromUrl(urlOf(database), { migrate: false, maxConnections: 4, poolMode }))
    )
  )
const MODES = ["unnamed", "named"] as const
type Mode = typeof MODES[number]
const runtimes: Record<Mode, Record<Side, ReturnType<typeof runtimeOf>>> = {
  unnamed: { table: runtimeOf("table", "transaction"), parted: runtimeOf("parted", "transaction") },
  named: { table: runtimeOf("table", "session"), parted: runtimeOf("parted", "session") }
}

const claimOptions = (now: number): ClaimOptions => ({
  owner: "bench",
  now,
  limit: 50,
  perOrg: 64,
  inFlight: new Map(),
  after: "",
  leaseMarginMs: 5_000
})
const putBack = (eventSeqs: ReadonlyArray<string>): ReadonlyArray<AttemptResult> =>
  eventSeqs.map((eventSeq) => ({ eventSeq, state: "pending", dueAt: 0, status: 500, error: undefined, millis: 80 }))

/** A claim of 50 due events, timed, then the events put back due (untimed). */
const backlogClaim = (rt: ReturnType<typeof runtimeOf>) =>
  rt.runPromise(Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const started = performance.now()
    const claimed = yield* repo.claim(claimOptions(NOW))
    const ms = performance.now() - started
    if (claimed.length === 0) throw new Error("the backlog claim found nothing")
    yield* repo.complete("bench", NOW, putBack(claimed.map((c) => c.eventSeq)))
    return ms
  }))
/** A claim when nothing is due (`now` before every due time): it walks the orgs and takes nothing. */
const dryClaim = (rt: ReturnType<typeof runtimeOf>) =>
  rt.runPromise(Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const started = performance.now()
    const claimed = yield* repo.claim(claimOptions(-1))
    const ms = performance.now() - started
    if (claimed.length !== 0) throw new Error("the dry claim took events")
    return ms
  }))

const CASES = [
  { label: `claim, backlog (50 of ${PENDING.toLocaleString("en-US")} due)`, run: backlogClaim },
  { label: "claim, nothing due (backlog leased)", run: dryClaim }
] as const
type Samples = Record<string, Record<Side, Array<number>>>
const samples: Samples = {}
const keyOf = (mode: Mode, label: string) => `${label}, ${mode}`
for (const mode of MODES) {
  for (const c of CASES) samples[keyOf(mode, c.label)] = { table: [], parted: [] }
}
const roundRatios: Record<string, Array<number>> = {}

// warm-up: plans, caches
for (const mode of MODES) {
  for (const side of SIDES) {
    for (const c of CASES) for (let i = 0; i < 5; i++) await c.run(runtimes[mode][side])
  }
}
for (let round = 0; round < ROUNDS; round++) {
  const order: ReadonlyArray<Side> = round % 2 === 0 ? SIDES : [...SIDES].reverse()
  for (const mode of MODES) {
    for (const c of CASES) {
      const perSide: Record<Side, Array<number>> = { table: [], parted: [] }
      for (const side of order) {
        for (let i = 0; i < REPS; i++) perSide[side].push(await c.run(runtimes[mode][side]))
      }
      const key = keyOf(mode, c.label)
      for (const side of SIDES) samples[key]![side].push(median(perSide[side]))
      ;(roundRatios[key] ??= []).push(median(perSide.parted) / median(perSide.table))
    }
  }
  log(`round ${round + 1}/${ROUNDS} done`)
}

// the empty outbox: every pending event delivered
for (const side of SIDES) {
  await once(
    side,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE webhook_events SET state = 'delivered', finished_at = ${NOW} WHERE state = 'pending'`
      yield* sql`VACUUM ANALYZE webhook_events`
    }).pipe(Effect.orDie)
  )
}
const EMPTY = "claim, empty outbox"
for (const mode of MODES) {
  const key = keyOf(mode, EMPTY)
  samples[key] = { table: [], parted: [] }
  for (let round = 0; round < ROUNDS; round++) {
    const order: ReadonlyArray<Side> = round % 2 === 0 ? SIDES : [...SIDES].reverse()
    const perSide: Record<Side, Array<number>> = { table: [], parted: [] }
    for (const side of order) {
      for (let i = 0; i < REPS; i++) perSide[side].push(await dryClaim(runtimes[mode][side]))
    }
    for (const side of SIDES) samples[key][side].push(median(perSide[side]))
    ;(roundRatios[key] ??= []).push(median(perSide.parted) / median(perSide.table))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Retention: the old day removed, with a claim loop running on another connection
// ---------------------------------------------------------------------------------------------------------------
const walBytes = (side: Side) =>
  once(
    side,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`
      return rows[0]!.lsn
    }).pipe(Effect.orDie)
  )
const walDiff = (side: Side, from: string, to: string) =>
  once(
    side,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ n: string }>`SELECT pg_wal_lsn_diff(${to}::pg_lsn, ${from}::pg_lsn)::int8::text AS n`
      return Number(rows[0]!.n)
    }).pipe(Effect.orDie)
  )

/** Runs `removal` while a claim loop (unnamed statements) records each claim's time; returns both. */
const underLoad = async (side: Side, removal: () => Promise<number>) => {
  // the empty outbox would make the loop's claims trivial: a backlog again, so they do work while the day goes
  await once(side, seedPending(PENDING))
  let stop = false
  const waits: Array<number> = []
  const loop = (async () => {
    while (!stop) waits.push(await backlogClaim(runtimes.unnamed[side]))
  })()
  const from = await walBytes(side)
  const started = performance.now()
  const removed = await removal()
  const ms = performance.now() - started
  stop = true
  await loop
  const to = await walBytes(side)
  return { ms, removed, waits, wal: await walDiff(side, from, to) }
}

// the scheduler's own housekeeping round (on the live clock: the old day ended more than RETENTION before it)
const deletes = await underLoad("table", () =>
  runtimes.unnamed.table.runPromise(
    Effect.map(WebhookHousekeeping.round({ retentionMs: RETENTION }), (deleted) => deleted.events)
  ))
const vacuumStarted = performance.now()
await once(
  "table",
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`VACUUM webhook_events`
  }).pipe(Effect.orDie)
)
const vacuumMs = performance.now() - vacuumStarted

const oldDay = dayName(OLD_DAY)
const drops = await underLoad("parted", () =>
  once(
    "parted",
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql.unsafe<{ n: string }>(`SELECT count(*)::text AS n FROM ${oldDay}`)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL lock_timeout = '2s'`
        yield* sql.unsafe(`ALTER TABLE webhook_events DETACH PARTITION ${oldDay}`)
        yield* sql.unsafe(`ALTER TABLE ${oldDay} RENAME TO ${oldDay}_expired`)
      }))
      yield* sql.unsafe(`DROP TABLE ${oldDay}_expired`)
      return Number(rows[0]!.n)
    }).pipe(Effect.orDie)
  ))

for (const mode of MODES) {
  for (const side of SIDES) await runtimes[mode][side].dispose()
}
await Effect.runPromise(Scope.close(scope, Exit.void))
fs.rmSync(dataDir, { recursive: true, force: true })

// ---------------------------------------------------------------------------------------------------------------
// 5. Report
// ---------------------------------------------------------------------------------------------------------------
const f = (ms: number) => `${ms.toFixed(3)} ms`
const x = (r: number) => `${r.toFixed(2)}x`
const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}
const lines = [
  `### Outbox partitioned by day (${new Date().toISOString().slice(0, 10)}, commit ${commit})`,
  "",
  `\`node tools/bench/outboxPartitions.bench.ts --rounds=${ROUNDS} --reps=${REPS} --per-day=${PER_DAY} --pending=${PENDING}\`; load average ${
    loadAtStart.map((l) => l.toFixed(1)).join(" / ")
  } at start, ${
    os.loadavg().map((l) => l.toFixed(1)).join(" / ")
  } at the end. \`parted\`: 12 partitions (default, 8 days of history and today, 2 ahead).`,
  "",
  "| statement | table (median of rounds) | parted | parted / table | median of round ratios |",
  "| --- | ---: | ---: | ---: | ---: |",
  ...Object.entries(samples).map(([label, s]) => {
    const table = median(s.table)
    const parted = median(s.parted)
    return `| ${label} | ${f(table)} | ${f(parted)} | ${x(parted / table)} | ${x(median(roundRatios[label]!))} |`
  }),
  "",
  "| retention of one day | rows | wall | WAL | claims meanwhile | claim median | claim p99 | longest claim |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...([["deletes of 5,000 (table)", deletes], ["detach, then drop (parted)", drops]] as const).map(([label, r]) =>
    `| ${label} | ${r.removed} | ${f(r.ms)} | ${(r.wal / 1048576).toFixed(1)} MiB | ${r.waits.length} | ${
      f(median(r.waits))
    } | ${f(percentile(r.waits, 0.99))} | ${f(Math.max(...r.waits))} |`
  ),
  "",
  `The deletes leave dead rows for VACUUM: \`VACUUM webhook_events\` after them took ${f(vacuumMs)}.`
]
process.stdout.write(`${lines.join("\n")}\n`)
