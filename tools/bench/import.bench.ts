// `admin import --kind contacts` of contacts with history against `seed` (issue 13: "import of 1,000,000 contacts
// with history within 2x of the seed command's time"), measured side by side in the same run.
//
//   node tools/bench/import.bench.ts [--rounds=5]         IMPORT_BENCH_SCALE=0.1 for 100,000 contacts
//
// The file holds exactly the contacts the seed generates (ContactSeed.generate, same seed and instant), one JSON
// line each with every field a contact has (ids, names, tags, custom fields, conversation_count,
// last_conversation_timestamp, created and user_modified timestamps): the same rows, once generated in memory and
// once read from a file, parsed, validated and checked for duplicates. Each round loads both into fresh databases
// cloned from one migrated template, in alternating order, on an embedded PostgreSQL with the settings of
// contacts.bench.ts (removed at the end). Both include the index rebuild and VACUUM (ANALYZE). Prints the medians
// and the ratio; the exit code is 0 either way (a loaded machine is not a regression).
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Importer } from "@svc/server/admin/Import.ts"
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { argument, median } from "./support/BenchSupport.ts"

const scale = Number(process.env["IMPORT_BENCH_SCALE"] ?? 1)
const COUNT = Math.round(1_000_000 * scale)
const ROUNDS = argument("rounds", 5)
const ORG = OrgId.make("org-import")
const SEED = 1
const NOW = 1_780_000_000_000

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

const loadAtStart = os.loadavg()
const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-import-"))
fs.chmodSync(dataDir, 0o755)
const file = path.join(dataDir, "..", `${path.basename(dataDir)}-contacts.jsonl`)
const server = await Effect.runPromise(
  Scope.provide(EmbeddedPostgres.start({ dataDir, database: "bench", settings: SETTINGS }), scope)
)
const urlOf = (database: string) => {
  const parsed = new URL(Redacted.value(server.adminUrl))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}

const withDatabase = <A, E>(
  database: string,
  effect: Effect.Effect<A, E, SqlClient.SqlClient | Importer>,
  migrate = false
) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        Layer.build(
          Importer.layer.pipe(
            Layer.provideMerge(Database.layerFromUrl(urlOf(database), { maxConnections: 2, migrate }))
          )
        ),
        (context) => Effect.provideContext(effect, context)
      )
    )
  )

/** The seed's contacts as import lines, written in chunks (the file of 1M is ~0.5 GB). */
const writeFile = () => {
  const out = fs.openSync(file, "w")
  const step = 20_000
  for (let start = 0; start < COUNT; start += step) {
    const c = ContactSeed.generate(ORG, { seed: SEED, start, count: Math.min(step, COUNT - start), now: NOW })
    const lines: Array<string> = []
    for (let i = 0; i < c.contactId.length; i++) {
      const line: Record<string, unknown> = {
        contact_id: c.contactId[i],
        phone_number: c.phoneNumber[i],
        do_not_call: c.doNotCall[i],
        contact_tags: c.tags[i] === "" ? [] : c.tags[i]!.split("\u001f"),
        custom_fields: c.customFields[i],
        conversation_count: c.conversationCount[i],
        created_timestamp: c.createdTimestamp[i],
        user_modified_timestamp: c.userModifiedTimestamp[i]
      }
      if (c.firstName[i] !== null) line["first_name"] = c.firstName[i]
      if (c.lastName[i] !== null) line["last_name"] = c.lastName[i]
      if (c.externalId[i] !== null) line["external_id"] = c.externalId[i]
      if (c.lastConversationTimestamp[i] !== null) line["last_conversation_timestamp"] = c.lastConversationTimestamp[i]
      lines.push(JSON.stringify(line))
    }
    fs.writeSync(out, lines.join("\n") + "\n")
  }
  fs.closeSync(out)
}

const addOrg = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${ORG}, ${ORG}, 0)`
)

const fresh = async (name: string) => {
  await Effect.runPromise(DatabaseAdmin.dropDatabase(server.adminUrl, name))
  await Effect.runPromise(DatabaseAdmin.ensureDatabase(server.adminUrl, name, "bench_template"))
}

const seedOnce = async (round: number) => {
  const name = `seed_${round}`
  await fresh(name)
  const ms = await withDatabase(
    name,
    Effect.gen(function*() {
      yield* addOrg
      const started = performance.now()
      const result = yield* ContactSeed.load([{ orgId: ORG, contacts: COUNT }], { seed: SEED, now: NOW })
      if (result.inserted[0]?.contacts !== COUNT) throw new Error(`seed inserted ${result.inserted[0]?.contacts}`)
      return performance.now() - started
    })
  )
  await Effect.runPromise(DatabaseAdmin.dropDatabase(server.adminUrl, name))
  return ms
}

const importOnce = async (round: number) => {
  const name = `import_${round}`
  await fresh(name)
  const ms = await withDatabase(
    name,
    Effect.gen(function*() {
      yield* addOrg
      const importer = yield* Importer
      const started = performance.now()
      const imported = yield* importer.importFile(ORG, "contacts", file)
      if (imported !== COUNT) throw new Error(`import inserted ${imported}`)
      return performance.now() - started
    })
  )
  await Effect.runPromise(DatabaseAdmin.dropDatabase(server.adminUrl, name))
  return ms
}

const main = async () => {
  log(`scale ${scale}: ${COUNT} contacts, ${ROUNDS} rounds; load ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}`)
  await Effect.runPromise(DatabaseAdmin.ensureDatabase(server.adminUrl, "bench_template"))
  await withDatabase("bench_template", Effect.void, true)
  const wrote = performance.now()
  writeFile()
  log(`file: ${(fs.statSync(file).size / 1e6).toFixed(0)} MB in ${((performance.now() - wrote) / 1000).toFixed(1)} s`)
  const seeds: Array<number> = []
  const imports: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    // alternate which goes first, so a trend in background load hits both alike
    if (round % 2 === 0) {
      seeds.push(await seedOnce(round))
      imports.push(await importOnce(round))
    } else {
      imports.push(await importOnce(round))
      seeds.push(await seedOnce(round))
    }
    log(
      `round ${round + 1}: seed ${(seeds.at(-1)! / 1000).toFixed(1)} s, import ${(imports.at(-1)! / 1000).toFixed(1)} s`
    )
  }
  const seed = median(seeds)
  const imported = median(imports)
  const lines = [
    `| ${COUNT.toLocaleString("en-US")} contacts, ${ROUNDS} rounds | median | all rounds (s) |`,
    "| --- | ---: | --- |",
    `| \`seed\` (ContactSeed.load) | ${(seed / 1000).toFixed(1)} s | ${
      seeds.map((s) => (s / 1000).toFixed(1)).join(", ")
    } |`,
    `| \`import --kind contacts\` (Importer) | ${(imported / 1000).toFixed(1)} s | ${
      imports.map((s) => (s / 1000).toFixed(1)).join(", ")
    } |`,
    `| ratio import / seed | ${(imported / seed).toFixed(2)}x | goal <= 2x |`,
    "",
    `load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}, at end ${
      os.loadavg().map((l) => l.toFixed(2)).join(" ")
    }; ${os.cpus().length} CPUs, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`
  ]
  process.stdout.write(lines.join("\n") + "\n")
}

try {
  await main()
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
  fs.rmSync(file, { force: true })
}
