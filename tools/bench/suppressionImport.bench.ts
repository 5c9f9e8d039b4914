// `admin import --kind suppressions` of a national registry's file (issue 31 item 5: "10 million numbers imported in
// <= 2 minutes here, all or nothing, with progress"; decision 0550) against a bare COPY of the same file, in the same
// run.
//
//   node tools/bench/suppressionImport.bench.ts [--rounds=3]     SUPPRESSION_BENCH_NUMBERS=n (default 10,000,000)
//
// The file is the registry's plain text: one 10-digit NANP number a line, distinct, in a random order (a
// deterministic generator; the registry's own files come sorted, which only helps the import), ~110 MB for 10M.
// - import: `Importer.importFile(org, "suppressions", file)`, what the admin command runs: the file read and checked
//   line by line, the numbers as +1 and the ten digits, chunks inserted into the suppression list (its primary key
//   maintained) in one transaction, progress reported;
// - bare COPY: a bare `pg` client COPYs the same file into an unindexed one-column table in one transaction (what
//   reading the bytes into PostgreSQL costs at the least: no check, no conversion, no index).
// Each round loads both into a fresh database cloned from one migrated template, in alternating order, on an
// embedded PostgreSQL with svc's own settings (npm start's), removed at the end. Prints the medians, the ratio and
// the goal; the exit code is 0 either way (a loaded machine is not a regression).
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Importer } from "@svc/server/admin/Import.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as DatabaseAdmin from "@svc/store/db/DatabaseAdmin.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import type { Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import pg from "pg"
import { argument, gitCommit, median } from "./support/BenchSupport.ts"

// pg-copy-streams ships no type declarations; this is the one function used.
const { from: copyFrom } = createRequire(import.meta.url)("pg-copy-streams") as {
  from: (text: string) => Writable & pg.Submittable
}

const COUNT = Number(process.env["SUPPRESSION_BENCH_NUMBERS"] ?? 10_000_000)
const ROUNDS = argument("rounds", 3)
const ORG = OrgId.make("org-suppressions")
const GOAL_MS = 120_000

const log = (line: string) => process.stderr.write(`${line}\n`)
const commit = gitCommit()

const loadAtStart = os.loadavg()
const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-suppressions-"))
fs.chmodSync(dataDir, 0o755)
const file = path.join(dataDir, "..", `${path.basename(dataDir)}-registry.txt`)
const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir, database: "bench" }), scope))
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

/**
 * COUNT distinct NANP numbers in a random order: an affine permutation of the 8,000,000,000 numbers 2000000000 +
 * k (k < 8e9, the multiplier odd and coprime to 8e9's factors 2 and 5), keeping those whose exchange begins with 2-9.
 */
const writeFile = () => {
  const out = fs.openSync(file, "w")
  const SPACE = 8_000_000_000n
  const A = 2_654_435_761n // odd, not a multiple of 5: a bijection of Z/8e9
  let k = 0n
  let written = 0
  let block: Array<string> = []
  while (written < COUNT) {
    const value = ((k * A + 12_345n) % SPACE) + 2_000_000_000n
    k++
    const digits = value.toString()
    if (digits[3]! < "2") continue
    block.push(digits)
    written++
    if (block.length === 100_000) {
      fs.writeSync(out, block.join("\n") + "\n")
      block = []
    }
  }
  if (block.length > 0) fs.writeSync(out, block.join("\n") + "\n")
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

const importOnce = async (round: number) => {
  const name = `import_${round}`
  await fresh(name)
  let lastProgress = ""
  const phases = new Map<string, number>()
  const ms = await withDatabase(
    name,
    Effect.gen(function*() {
      yield* addOrg
      const importer = yield* Importer
      const started = performance.now()
      const imported = yield* importer.importFile(ORG, "suppressions", file, {
        onProgress: (p) => {
          if (!phases.has(p.phase)) phases.set(p.phase, performance.now())
          if (p.phase === "read") lastProgress = `${p.phase} ${p.done}/${p.total}`
        }
      })
      if (imported !== COUNT) throw new Error(`import listed ${imported}`)
      return performance.now() - started
    })
  )
  if (lastProgress !== `read ${COUNT}/${COUNT}`) throw new Error(`last progress ${lastProgress}`)
  const list = phases.get("list")
  if (list !== undefined) log(`  import phases: file read and sorted in ${seconds(list - phases.get("read")!)} s`)
  await Effect.runPromise(DatabaseAdmin.dropDatabase(server.adminUrl, name))
  return ms
}

const copyOnce = async (round: number) => {
  const name = `copy_${round}`
  await fresh(name)
  const client = new pg.Client({ connectionString: Redacted.value(urlOf(name)) })
  await client.connect()
  try {
    await client.query("CREATE TABLE bare_copy (digits text)")
    const started = performance.now()
    await client.query("BEGIN")
    await pipeline(fs.createReadStream(file), client.query(copyFrom("COPY bare_copy (digits) FROM STDIN")))
    await client.query("COMMIT")
    const ms = performance.now() - started
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM bare_copy")
    if (Number(rows[0]!.n) !== COUNT) throw new Error(`copy loaded ${rows[0]!.n}`)
    return ms
  } finally {
    await client.end()
    await Effect.runPromise(DatabaseAdmin.dropDatabase(server.adminUrl, name))
  }
}

const seconds = (ms: number) => (ms / 1000).toFixed(1)

const main = async () => {
  log(`${COUNT} numbers, ${ROUNDS} rounds; load ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}`)
  await Effect.runPromise(DatabaseAdmin.ensureDatabase(server.adminUrl, "bench_template"))
  await withDatabase("bench_template", Effect.void, true)
  const wrote = performance.now()
  writeFile()
  log(`file: ${(fs.statSync(file).size / 1e6).toFixed(0)} MB in ${seconds(performance.now() - wrote)} s`)
  const imports: Array<number> = []
  const copies: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    // alternate which goes first, so a trend in background load hits both alike
    if (round % 2 === 0) {
      imports.push(await importOnce(round))
      copies.push(await copyOnce(round))
    } else {
      copies.push(await copyOnce(round))
      imports.push(await importOnce(round))
    }
    log(`round ${round + 1}: import ${seconds(imports.at(-1)!)} s, bare COPY ${seconds(copies.at(-1)!)} s`)
  }
  const imported = median(imports)
  const copied = median(copies)
  const lines = [
    `| ${COUNT.toLocaleString("en-US")} numbers, ${ROUNDS} rounds | median | numbers/s | all rounds (s) |`,
    "| --- | ---: | ---: | --- |",
    `| \`import --kind suppressions\` (Importer, registry text) | ${seconds(imported)} s | ${
      Math.round(COUNT / (imported / 1000)).toLocaleString("en-US")
    } | ${imports.map(seconds).join(", ")} |`,
    `| bare COPY of the same file into an unindexed table | ${seconds(copied)} s | ${
      Math.round(COUNT / (copied / 1000)).toLocaleString("en-US")
    } | ${copies.map(seconds).join(", ")} |`,
    `| ratio import / bare COPY | ${(imported / copied).toFixed(2)}x | | |`,
    "",
    `Goal: <= ${GOAL_MS / 1000} s for 10,000,000: ${imported <= GOAL_MS ? "met" : "NOT met"}. Commit ${commit}, ${
      new Date().toISOString().slice(0, 10)
    }; load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}, at end ${
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
