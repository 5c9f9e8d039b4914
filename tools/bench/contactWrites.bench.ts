// What the search copy (migration 0027, decision 0643) costs the writers: `admin seed` of this checkout against the
// same command of another checkout (BENCH_SVC_B_DIR, e.g. a clone of the commit before the copy, with its own
// node_modules), round by round in alternating order, each into a fresh database of one embedded PostgreSQL.
//
//   BENCH_SVC_B_DIR=/path/to/before node tools/bench/contactWrites.bench.ts [--rounds=5] [--contacts=1000000]
//
// Each round and side: `create-org`, then a large seed into the empty org (the bulk path: secondary indexes dropped
// and rebuilt, VACUUM ANALYZE), then a second seed of 2 % more into the same org (the incremental path: every index
// maintained row by row, so the copy's trigram index is paid per row as well). Times are the seed's own `millis`
// (the load's transaction and the vacuum, not the process start or the migrations). Prints medians and the median
// of the per-round ratios, and what upgrading B's database costs: this checkout's first admin command on it (its
// new migrations) less its second.
import { Redacted } from "effect"
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import pg from "pg"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const ROUNDS = argument("rounds", 5)
const CONTACTS = argument("contacts", 1_000_000)
const MORE = Math.max(1, Math.round(CONTACTS * 0.02))
const here = path.resolve(import.meta.dirname, "../..")
const other = process.env["BENCH_SVC_B_DIR"]
if (other === undefined) throw new Error("BENCH_SVC_B_DIR: the checkout to compare with")
const sides = [{ name: "this checkout", dir: here }, { name: `B (${other})`, dir: path.resolve(other) }]

const database = await benchDatabase("contact-writes")
try {
  const adminUrl = new URL(Redacted.value(database.url))
  const client = new pg.Client({ connectionString: adminUrl.toString() })
  await client.connect()
  const admin = (dir: string, url: string, args: ReadonlyArray<string>) =>
    JSON.parse(
      execFileSync(process.execPath, [path.join(dir, "apps/server/src/admin.ts"), ...args], {
        cwd: dir,
        env: { ...process.env, DATABASE_URL: url },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"]
      })
    ) as Record<string, unknown>
  const times = sides.map(() => ({ bulk: [] as Array<number>, incremental: [] as Array<number> }))
  const upgrades: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    for (const i of order) {
      const name = `writes_${round}_${i}`
      await client.query(`CREATE DATABASE ${name}`)
      const url = new URL(adminUrl.toString())
      url.pathname = `/${name}`
      const org = admin(sides[i]!.dir, url.toString(), ["create-org", "--name", "bench"])["org_id"] as string
      const bulk = admin(sides[i]!.dir, url.toString(), ["seed", "--org", org, "--contacts", String(CONTACTS)])
      const more = admin(sides[i]!.dir, url.toString(), ["seed", "--org", org, "--contacts", String(MORE)])
      // the seed rebuilds the indexes from 100,000 contacts on (ContactSeed.load, "auto")
      if (bulk["rebuilt_indexes"] !== CONTACTS >= 100_000 || more["rebuilt_indexes"] !== false) {
        throw new Error(`unexpected seed paths: ${JSON.stringify([bulk, more])}`)
      }
      times[i]!.bulk.push(Number(bulk["millis"]))
      times[i]!.incremental.push(Number(more["millis"]))
      if (i === 1) {
        // the upgrade: this checkout's first command on B's database runs the migrations B does not have (0027
        // copies every contact's search text and builds its index); a second command is the process alone
        const timed = () => {
          const started = performance.now()
          admin(sides[0]!.dir, url.toString(), ["create-org", "--name", "upgrade"])
          return performance.now() - started
        }
        const first = timed()
        upgrades.push(first - timed())
      }
      await client.query(`DROP DATABASE ${name}`)
      process.stderr.write(`round ${round + 1} ${sides[i]!.name}: ${bulk["millis"]} ms, +${more["millis"]} ms\n`)
    }
  }
  await client.end()
  const ratios = (key: "bulk" | "incremental") =>
    median(times[0]![key].map((t, round) => t / times[1]![key][round]!)).toFixed(2)
  process.stdout.write(
    `${ROUNDS} rounds, ${CONTACTS.toLocaleString()} contacts then ${MORE.toLocaleString()} more\n\n` +
      "| seed | this checkout, median ms | B, median ms | this / B, median of per-round ratios |\n" +
      "|---|---:|---:|---:|\n" +
      `| ${CONTACTS.toLocaleString()} into an empty org (indexes rebuilt) | ${median(times[0]!.bulk)} | ` +
      `${median(times[1]!.bulk)} | ${ratios("bulk")} |\n` +
      `| ${MORE.toLocaleString()} more (indexes maintained row by row) | ${median(times[0]!.incremental)} | ` +
      `${median(times[1]!.incremental)} | ${ratios("incremental")} |\n` +
      `\nupgrade of B's database by this checkout's migrations (${(CONTACTS + MORE).toLocaleString()} contacts): ` +
      `median ${median(upgrades).toFixed(0)} ms, rounds ${upgrades.map((u) => u.toFixed(0)).join(", ")}\n` +
      `\nper round (ms): ${JSON.stringify(times)}\n`
  )
} finally {
  await database.close()
}
