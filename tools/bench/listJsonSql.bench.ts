// The page statement of list-contacts against its JSON form (decision 0640), in PostgreSQL alone: both prepared
// through a bare `pg` client on the same embedded database, alternating, so the difference is the cost of writing
// 100 contacts as JSON in the database against sending their 13 columns and parsing them in Node.
//
//   node tools/bench/listJsonSql.bench.ts     (BENCH_CONTACTS=200000, BENCH_ITERATIONS=300 by default)
import { ListContactsRequest } from "@svc/domain/models/ListContacts.ts"
import { ApiKeys } from "@svc/store/ApiKeys.ts"
import * as ContactSeed from "@svc/store/ContactSeed.ts"
import * as ContactsQuery from "@svc/store/ContactsQuery.ts"
import * as Database from "@svc/store/Database.ts"
import * as EmbeddedPostgres from "@svc/store/EmbeddedPostgres.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const CONTACTS = Number(process.env["BENCH_CONTACTS"] ?? 200_000)
const ITERATIONS = Number(process.env["BENCH_ITERATIONS"] ?? 300)

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-listjson-"))
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
  const client = new pg.Client({ connectionString: Redacted.value(server.url) })
  await client.connect()
  const request = new ListContactsRequest({ limit: 100, sort_order: "desc" })
  const rows = ContactsQuery.pageStatement(orgId, request, { _tag: "First" })
  const json = ContactsQuery.pageJsonStatement(orgId, request, { _tag: "First" })
  const sides = [
    { name: "rows (13 columns, parsed by pg)", statement: rows, times: [] as Array<number> },
    { name: "JSON written by PostgreSQL", statement: json, times: [] as Array<number> }
  ]
  for (let i = 0; i < ITERATIONS + 20; i++) {
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      const started = process.hrtime.bigint()
      await client.query({ name: side.name, text: side.statement.text, values: [...side.statement.params] })
      if (i >= 20) side.times.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
  }
  const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${json.text}`, [...json.params])
  await client.end()
  process.stdout.write(
    `${CONTACTS.toLocaleString()} contacts, limit 100, unfiltered; ${ITERATIONS} alternating iterations; load ` +
      `${os.loadavg()[0]?.toFixed(1)}\n\n| statement | median ms | p90 ms |\n|---|---:|---:|\n` +
      sides.map((s) =>
        `| ${s.name} | ${median(s.times).toFixed(2)} | ${
          [...s.times].sort((a, b) => a - b)[Math.floor(s.times.length * 0.9)]!.toFixed(2)
        } |`
      ).join("\n") + `\n\nratio ${(median(sides[1]!.times) / median(sides[0]!.times)).toFixed(2)}\n\n` +
      plan.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n") + "\n"
  )
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
