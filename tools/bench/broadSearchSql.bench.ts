// Broad search, first page with exact total (issue 17, item 4), in PostgreSQL alone: the bare count(*) of the
// predicate over contacts against (a) today's page and count on two connections at once (ContactsRepo.list), the
// count reading the narrow search copy (decision 0643), and the same with the count over contacts, as before; (b) one statement
// that materialises the matches' (sort key, id) once and takes both the count and the page's ids from it, (c) the
// page with count(*) OVER () on the matches. Bare `pg` clients on one embedded database; rounds alternate the order.
//
//   node tools/bench/broadSearchSql.bench.ts     (BENCH_CONTACTS=200000, BENCH_ROUNDS=7, BENCH_SEARCH=son)
import { ListContactsRequest } from "@svc/domain/models/ListContacts.ts"
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as ContactsQuery from "@svc/store/contacts/ContactsQuery.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const CONTACTS = Number(process.env["BENCH_CONTACTS"] ?? 200_000)
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 7)
const SEARCH = process.env["BENCH_SEARCH"] ?? "son"

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-broad-"))
fs.chmodSync(dataDir, 0o755)
try {
  const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
  const orgId = await Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(server.url)))),
        (context) =>
          Effect.provideContext(
            Effect.gen(function*() {
              const keys = yield* ApiKeys
              const orgId = yield* keys.createOrg("bench")
              yield* ContactSeed.load([{ orgId, contacts: CONTACTS }], { seed: 1 })
              return orgId
            }),
            context
          )
      )
    )
  )
  const url = Redacted.value(server.url)
  const a = new pg.Client({ connectionString: url })
  const b = new pg.Client({ connectionString: url })
  await a.connect()
  await b.connect()
  await a.query("ANALYZE contacts, contact_search")
  const request = new ListContactsRequest({ limit: 100, sort_order: "desc", search_query: SEARCH })
  const page = ContactsQuery.pageStatement(orgId, request, { _tag: "First" })
  // the bare count over contacts (the baseline), and the product's count over the search copy (decision 0643)
  const count = ContactsQuery.contactsCountStatement(orgId, request)
  const copyCount = ContactsQuery.countStatement(orgId, request)
  const where = count.text.slice(count.text.indexOf("WHERE") + 6)
  const key = "coalesce(last_conversation_timestamp, 0)"
  const materialised = `WITH m AS MATERIALIZED (SELECT contact_id, ${key} AS k FROM contacts WHERE ${where}) ` +
    `SELECT (SELECT count(*) FROM m) AS total, c.* FROM (SELECT contact_id, k FROM m ORDER BY k DESC, ` +
    `contact_id DESC LIMIT 101) p JOIN contacts c ON c.org_id = $1 AND c.contact_id = p.contact_id ` +
    `ORDER BY p.k DESC, p.contact_id DESC`
  const windowed = `SELECT ${ContactsQuery.contactColumns}, count(*) OVER () AS total FROM contacts WHERE ${where} ` +
    `ORDER BY ${key} DESC, contact_id DESC LIMIT 101`
  const params = [...count.params]
  const time = async (run: () => Promise<unknown>) => {
    const started = process.hrtime.bigint()
    await run()
    return Number(process.hrtime.bigint() - started) / 1e6
  }
  const sides: Array<{ name: string; run: () => Promise<unknown>; times: Array<number> }> = [
    { name: "bare count(*)", run: () => a.query(count.text, params), times: [] },
    {
      name: "page ‖ count of the copy on two connections (today's `ContactsRepo.list`)",
      run: () => Promise.all([a.query(page.text, [...page.params]), b.query(copyCount.text, params)]),
      times: []
    },
    { name: "count of the copy alone", run: () => a.query(copyCount.text, params), times: [] },
    {
      name: "page ‖ count over contacts on two connections (before decision 0643)",
      run: () => Promise.all([a.query(page.text, [...page.params]), b.query(count.text, params)]),
      times: []
    },
    { name: "one statement, matches materialised once", run: () => a.query(materialised, params), times: [] },
    { name: "page with count(*) OVER ()", run: () => a.query(windowed, params), times: [] }
  ]
  for (const side of sides) await side.run()
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse()
    for (const side of order) side.times.push(await time(side.run))
  }
  const total = (await a.query(count.text, params)).rows[0].total
  const plan = await a.query(`EXPLAIN (ANALYZE, BUFFERS) ${copyCount.text}`, params)
  const barePlan = await a.query(`EXPLAIN (ANALYZE, BUFFERS) ${count.text}`, params)
  const sizes = await a.query(
    "SELECT pg_relation_size('contacts') AS contacts, pg_relation_size('contact_search') AS copy"
  )
  await a.end()
  await b.end()
  const base = median(sides[0]!.times)
  process.stdout.write(
    `search "${SEARCH}": ${Number(total).toLocaleString()} of ${CONTACTS.toLocaleString()} contacts; ${ROUNDS} ` +
      `alternating rounds; load ${os.loadavg()[0]?.toFixed(1)}\n\n| statement | median ms | vs bare count |\n` +
      "|---|---:|---:|\n" +
      sides.map((s) => `| ${s.name} | ${median(s.times).toFixed(1)} | ${(median(s.times) / base).toFixed(2)} |`)
        .join("\n") +
      `\n\nheap sizes: contacts ${(Number(sizes.rows[0].contacts) / 2 ** 20).toFixed(0)} MiB, contact_search ` +
      `${(Number(sizes.rows[0].copy) / 2 ** 20).toFixed(0)} MiB\n\ncount of the copy:\n` +
      plan.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n") + "\n\nbare count over contacts:\n" +
      barePlan.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n") + "\n"
  )
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
