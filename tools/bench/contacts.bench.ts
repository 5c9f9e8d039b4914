// list-contacts persistence (issue 4): ContactsRepo.list against the same SQL through a bare `pg` client,
// measured in the same run, on 1,000,000 contacts in one org plus 1,000,000 over 100 other orgs, and the time
// of `seed --contacts 1000000` (ContactSeed.load, indexes included). Goals from the issue:
//   - first page (limit 100) with exact total: p50 under 5 ms on one client;
//   - keyset page 1,000 within 1.2x of page 1; skip is the documented slow path;
//   - a selective search or custom-field filter, first page with exact total: within 1.5x of the bare SQL;
//   - a broad search: first page no slower than the bare exact count, later pages at the cost of a page;
//   - seed of 1,000,000 contacts under 2 minutes, indexes included.
//
//   node tools/bench/contacts.bench.ts            CONTACTS_BENCH_SCALE=0.1 for 100,000 + 100,000
//
// Runs on an embedded PostgreSQL in a temporary directory, with the settings of the floor measurement
// (reference/postgres-floor.md), removed at the end. The two paths alternate (and swap order every repetition),
// so background load on a shared machine hits both alike. The bare path runs exactly the statements the
// repository runs (ContactsQuery), prepared where the repository prepares, unnamed where it does not. Prints a
// Markdown table of medians and ratios; the exit code is 0 either way (a loaded machine is not a regression).
import { OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsBody, type ListContactsRequest } from "@svc/domain/models/ListContacts.ts"
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as ContactsQuery from "@svc/store/contacts/ContactsQuery.ts"
import { ContactsRepo } from "@svc/store/contacts/ContactsRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const scale = Number(process.env["CONTACTS_BENCH_SCALE"] ?? 1)
const BIG = Math.round(1_000_000 * scale)
const OTHER_ORGS = 100
const ORG = OrgId.make("org-a")

const SETTINGS: Record<string, string> = {
  shared_buffers: "2GB",
  effective_cache_size: "12GB",
  work_mem: "64MB",
  maintenance_work_mem: "1GB",
  max_wal_size: "16GB",
  checkpoint_timeout: "30min",
  random_page_cost: "1.1",
  jit: "off"
}

const log = (line: string) => process.stderr.write(`${line}\n`)
const median = (values: ReadonlyArray<number>): number => quantile(values, 0.5)
const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))

// ---------------------------------------------------------------------------------------------------------------
// Server and databases
// ---------------------------------------------------------------------------------------------------------------

const loadAtStart = os.loadavg()
const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-contacts-"))
fs.chmodSync(dataDir, 0o755)
const server = await Effect.runPromise(
  Scope.provide(EmbeddedPostgres.start({ dataDir, database: "bench", settings: SETTINGS }), scope)
)
const urlOf = (database: string) => {
  const parsed = new URL(Redacted.value(server.adminUrl))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}

const main = async () => {
  const withDatabase = <A, E>(database: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(Layer.build(Database.layerFromUrl(urlOf(database), { maxConnections: 2 })), (context) =>
          Effect.provideContext(effect, context))
      )
    )

  const addOrgs = (orgIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const orgId of orgIds) {
        yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, ${orgId}, 0)`
      }
    })

  const progressLine = (label: string) => {
    let last = 0
    return (p: ContactSeed.SeedProgress) => {
      const now = performance.now()
      if (now - last > 5000 || p.done === p.total) {
        last = now
        log(`  ${label}: ${p.phase} ${p.done}/${p.total}`)
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // 1. `seed --contacts N` into an empty table: the timed goal
  // ---------------------------------------------------------------------------------------------------------------

  log(`scale ${scale}: ${BIG} contacts in ${ORG} + ${BIG} over ${OTHER_ORGS} orgs; server ${JSON.stringify(SETTINGS)}`)
  await Effect.runPromise(DatabaseAdmin.ensureDatabase(server.adminUrl, "seedtime"))
  const seedTimed = await withDatabase(
    "seedtime",
    Effect.gen(function*() {
      yield* addOrgs([ORG])
      const started = performance.now()
      const result = yield* ContactSeed.load([{ orgId: ORG, contacts: BIG }], { onProgress: progressLine("seed") })
      return { ...result, wall: performance.now() - started }
    })
  )
  log(`seed of ${BIG}: ${(seedTimed.wall / 1000).toFixed(1)} s`)
  await Effect.runPromise(DatabaseAdmin.dropDatabase(server.adminUrl, "seedtime"))

  // ---------------------------------------------------------------------------------------------------------------
  // 2. The query data set: org A plus 100 orgs sized on a Zipf-like curve, rows interleaved in the heap as after
  //    real inserts (slices of 10,000 in a shuffled order)
  // ---------------------------------------------------------------------------------------------------------------

  const weights = Array.from({ length: OTHER_ORGS }, (_, k) => 1 / (k + 5))
  const weightSum = weights.reduce((a, b) => a + b, 0)
  const sizes = weights.map((w) => Math.floor((BIG * w) / weightSum))
  sizes[0]! += BIG - sizes.reduce((a, b) => a + b, 0)
  const others = sizes.map((size, k) => ({ orgId: `org-${String(k).padStart(3, "0")}`, contacts: size }))
  const slices: Array<ContactSeed.SeedPlan> = []
  for (const plan of [{ orgId: ORG, contacts: BIG }, ...others]) {
    for (let from = 0; from < plan.contacts; from += 10_000) {
      slices.push({ orgId: plan.orgId, contacts: Math.min(10_000, plan.contacts - from) })
    }
  }
  let shuffleState = 42
  for (let i = slices.length - 1; i > 0; i--) {
    shuffleState = (Math.imul(shuffleState, 1103515245) + 12345) >>> 0
    const j = shuffleState % (i + 1)
    ;[slices[i], slices[j]] = [slices[j]!, slices[i]!]
  }
  const fullLoad = await withDatabase(
    "bench",
    Effect.gen(function*() {
      yield* addOrgs([ORG, ...others.map((o) => o.orgId)])
      const started = performance.now()
      yield* ContactSeed.load(slices, { seed: 2, onProgress: progressLine("data set") })
      return performance.now() - started
    })
  )
  log(`data set of ${2 * BIG}: ${(fullLoad / 1000).toFixed(1)} s`)

  // ---------------------------------------------------------------------------------------------------------------
  // 3. The two paths
  // ---------------------------------------------------------------------------------------------------------------

  const runtime = ManagedRuntime.make(
    ContactsRepo.layer.pipe(
      Layer.provideMerge(CursorKeys.layer),
      Layer.provideMerge(Database.layerFromUrl(urlOf("bench"), { migrate: false, maxConnections: 4 }))
    )
  )
  const decode = Schema.decodeUnknownSync(ListContactsBody)
  const viaRepo = (body: Record<string, unknown>) =>
    runtime.runPromise(Effect.gen(function*() {
      const repo = yield* ContactsRepo
      return yield* repo.list(ORG, decode(body))
    }))

  const client = new pg.Client({ connectionString: Redacted.value(urlOf("bench")) })
  await client.connect()
  // The repository counts a filtered first page on a second connection while it reads the page: so does the bare path.
  const countClient = new pg.Client({ connectionString: Redacted.value(urlOf("bench")) })
  await countClient.connect()
  let statementNames = 0
  const names = new Map<string, string>()
  /** A statement as the repository runs it: named (prepared) unless it asks for a custom plan. */
  const bare = (statement: ContactsQuery.SqlText, on: pg.Client = client) => {
    if (statement.custom) return on.query(statement.text, [...statement.params])
    let name = names.get(statement.text)
    if (name === undefined) names.set(statement.text, name = `contacts_${++statementNames}`)
    return on.query({ name, text: statement.text, values: [...statement.params] })
  }
  const bareCount = async (request: ListContactsRequest) =>
    Number((await bare(ContactsQuery.countStatement(ORG, request))).rows[0].total)

  interface Scenario {
    readonly name: string
    readonly reps: number
    readonly repo: () => Promise<unknown>
    readonly bare: () => Promise<unknown>
    readonly matches: number
    readonly note?: string
  }

  const scenarios: Array<Scenario> = []

  // First page, no filter: one statement, the total from the maintained count.
  {
    const body = { limit: 100 }
    const request = decode(body)
    const statement = ContactsQuery.pageStatement(ORG, request, { _tag: "First" })
    scenarios.push({
      name: "first page, limit 100, exact total",
      reps: 300,
      repo: () => viaRepo(body),
      bare: () => bare(statement),
      matches: BIG
    })
  }

  // Keyset page 1,000 (after 99,900 rows) against page 1, both through the repository.
  const DEEP_PAGE = Math.max(2, Math.min(1000, Math.floor(BIG / 100) - 1))
  const deepName = `keyset page ${DEEP_PAGE.toLocaleString("en-US")}`
  {
    let key: string | undefined
    for (let page = 1; page < DEEP_PAGE; page++) {
      const response = await viaRepo({ limit: 100, ...(key === undefined ? {} : { pagination_key: key }) })
      key = response.pagination_key
    }
    const deep = { limit: 100, pagination_key: key }
    const position = (await client.query(
      `SELECT coalesce(last_conversation_timestamp, 0)::text AS k, contact_id FROM contacts WHERE org_id = $1
     ORDER BY coalesce(last_conversation_timestamp, 0) DESC, contact_id DESC OFFSET $2 LIMIT 1`,
      [ORG, (DEEP_PAGE - 1) * 100 - 1]
    )).rows[0]
    const statement = ContactsQuery.pageStatement(ORG, decode({ limit: 100 }), {
      _tag: "After",
      sortValue: Number(position.k),
      contactId: position.contact_id
    })
    scenarios.push({
      name: `${deepName} (limit 100)`,
      reps: 300,
      repo: () => viaRepo(deep),
      bare: () => bare(statement),
      matches: BIG
    })
    scenarios.push({
      name: `${deepName} vs page 1 (both repo)`,
      reps: 300,
      repo: () => viaRepo(deep),
      bare: () => viaRepo({ limit: 100 }),
      matches: BIG,
      note: "baseline = repo, page 1"
    })
  }

  // A search term with a given number of matches in org A.
  const pickTerm = async (candidates: ReadonlyArray<string>, accept: (n: number) => boolean) => {
    const counted: Array<string> = []
    for (const term of candidates) {
      const n = await bareCount(decode({ search_query: term }))
      counted.push(`${term}=${n}`)
      if (accept(n)) return { term, n }
    }
    throw new Error(`no term fits: ${counted.join(", ")}`)
  }

  // Selective search: first page with exact total (page, then the count when the page is full).
  {
    const { n, term } = await pickTerm(
      ["lovelace", "johansson", "kowalczyk", "nakamura", "dubois", "hanson", "ødegaard", "siobhán", "lovel"],
      (n) => n >= Math.max(5, 500 * scale) && n <= 5000 * scale
    )
    const body = { search_query: term, limit: 100 }
    const request = decode(body)
    const page = ContactsQuery.pageStatement(ORG, request, { _tag: "First" })
    const count = ContactsQuery.countStatement(ORG, request)
    scenarios.push({
      name: `selective search "${term}", first page + exact total`,
      reps: 60,
      repo: () => viaRepo(body),
      bare: () => Promise.all([bare(page), bare(count, countClient)]),
      matches: n
    })
  }

  // Broad search: first page (page + count) against the bare count alone; a later page against the bare page.
  {
    const { n, term } = await pickTerm(["son", "ann", "mar", "an"], (n) => n > 100_000 * scale)
    const body = { search_query: term, limit: 100 }
    const request = decode(body)
    // the issue's baseline (17, item 4): the bare count(*) of the predicate over contacts, not over the narrow copy
    // the repository counts on (decision 0643)
    const count = ContactsQuery.contactsCountStatement(ORG, request)
    scenarios.push({
      name: `broad search "${term}", first page + exact total`,
      reps: 15,
      repo: () => viaRepo(body),
      bare: () => bare(count),
      matches: n,
      note: "baseline = the bare exact count over contacts alone"
    })
    const first = await viaRepo(body)
    const next = { ...body, pagination_key: first.pagination_key }
    const last = first.items[first.items.length - 1]!
    const page2 = ContactsQuery.pageStatement(ORG, request, {
      _tag: "After",
      sortValue: last.last_conversation_timestamp ?? 0,
      contactId: last.contact_id
    })
    scenarios.push({
      name: `broad search "${term}", page 2 (total carried)`,
      reps: 200,
      repo: () => viaRepo(next),
      bare: () => bare(page2),
      matches: n
    })
  }

  // Custom-field filters: a selective one and a broad one, first page with exact total.
  for (
    const [label, filter] of [
      ["company = Acme Dental Inc", { key: "company", type: "string", value: "Acme Dental Inc" }],
      ["plan = enterprise", { key: "plan", type: "string", value: "enterprise" }]
    ] as const
  ) {
    const body = { filter_criteria: { custom_fields: [filter] }, limit: 100 }
    const request = decode(body)
    const n = await bareCount(request)
    const page = ContactsQuery.pageStatement(ORG, request, { _tag: "First" })
    const count = ContactsQuery.countStatement(ORG, request)
    scenarios.push({
      name: `custom field ${label}, first page + exact total`,
      reps: n > 20_000 * scale ? 15 : 60,
      repo: () => viaRepo(body),
      bare: () => Promise.all([bare(page), bare(count, countClient)]),
      matches: n
    })
  }

  // skip 100,000: the OFFSET path.
  {
    const body = { skip: Math.min(100_000, BIG - 100), limit: 100 }
    const statement = ContactsQuery.pageStatement(ORG, decode(body), { _tag: "Offset", offset: body.skip })
    scenarios.push({
      name: `skip ${body.skip}, limit 100`,
      reps: 30,
      repo: () => viaRepo(body),
      bare: () => bare(statement),
      matches: BIG
    })
  }

  // ---------------------------------------------------------------------------------------------------------------
  // 4. Measure
  // ---------------------------------------------------------------------------------------------------------------

  const time = async (f: () => Promise<unknown>) => {
    const started = performance.now()
    await f()
    return performance.now() - started
  }

  const rows: Array<string> = []
  const results = new Map<string, { repo: number; bare: number }>()
  for (const scenario of scenarios) {
    const warm = Math.max(3, Math.min(20, scenario.reps >> 3))
    for (let i = 0; i < warm; i++) {
      await scenario.repo()
      await scenario.bare()
    }
    const repoTimes: Array<number> = []
    const bareTimes: Array<number> = []
    for (let i = 0; i < scenario.reps; i++) {
      if (i % 2 === 0) {
        repoTimes.push(await time(scenario.repo))
        bareTimes.push(await time(scenario.bare))
      } else {
        bareTimes.push(await time(scenario.bare))
        repoTimes.push(await time(scenario.repo))
      }
    }
    const repo = median(repoTimes)
    const base = median(bareTimes)
    results.set(scenario.name, { repo, bare: base })
    const row = `| ${scenario.name} | ${scenario.matches.toLocaleString("en-US")} | ${fmt(repo)} / ${
      fmt(quantile(repoTimes, 0.95))
    } | ${fmt(base)} / ${fmt(quantile(bareTimes, 0.95))} | ${(repo / base).toFixed(2)}x | ${scenario.reps} | ${
      scenario.note ?? ""
    } |`
    rows.push(row)
    log(row)
  }

  await client.end()
  await countClient.end()
  await runtime.dispose()

  // ---------------------------------------------------------------------------------------------------------------
  // 5. Report
  // ---------------------------------------------------------------------------------------------------------------

  const first = results.get("first page, limit 100, exact total")!
  const deepVsFirst = results.get(`${deepName} vs page 1 (both repo)`)!
  const lines = [
    `contacts benchmark, scale ${scale}: ${BIG.toLocaleString("en-US")} contacts in ${ORG} + ${
      BIG.toLocaleString("en-US")
    } over ${OTHER_ORGS} orgs (rows interleaved), ${os.cpus().length} cores, PostgreSQL embedded with ${
      Object.entries(SETTINGS).map(([k, v]) => `${k}=${v}`).join(" ")
    }`,
    "",
    "| step | time |",
    "|---|---|",
    `| \`seed --contacts ${BIG}\` into an empty table (ContactSeed.load, indexes and VACUUM ANALYZE included) | ${
      (seedTimed.wall / 1000).toFixed(1)
    } s (goal < 120 s) |`,
    `| the query data set: ${(2 * BIG).toLocaleString("en-US")} contacts over 101 orgs, interleaved, one load | ${
      (fullLoad / 1000).toFixed(1)
    } s |`,
    "",
    `Times in ms, p50 / p95 over the repetitions, one client; ratio = repo p50 / bare p50. Load average at start ${
      loadAtStart.map((n) => n.toFixed(1)).join(" ")
    }, at end ${os.loadavg().map((n) => n.toFixed(1)).join(" ")} (a shared machine).`,
    "",
    "| query (org A) | matches | ContactsRepo.list | bare pg, same SQL | ratio | reps | note |",
    "|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `Goals: first page p50 ${fmt(first.repo)} ms (goal < 5 ms); ${deepName} / page 1 = ${
      (deepVsFirst.repo / deepVsFirst.bare).toFixed(2)
    }x (goal <= 1.2x).`
  ]
  process.stdout.write(lines.join("\n") + "\n")
}

try {
  await main()
} finally {
  // Stop the server and remove its files even when a step fails.
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
