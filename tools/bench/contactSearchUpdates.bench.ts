// What the search copy's update trigger (migration 0027, decision 0643) costs bulk updates of contacts: an update
// that changes the search text of 50,000 contacts (custom fields, as the contact-analysis backfill writes them) and
// one that changes only counters (as the call feed does), each with the copy's trigger enabled and disabled (the
// write cost without the copy), alternating within every round, on 200,000 seeded contacts of its own embedded
// PostgreSQL (removed at the end). Prints medians and the median of the per-round ratios.
//
//   node tools/bench/contactSearchUpdates.bench.ts [--rounds=5]
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as Database from "@svc/store/db/Database.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { Effect, Layer, Redacted } from "effect"
import * as os from "node:os"
import pg from "pg"
import { argument, benchDatabase, median } from "./support/BenchSupport.ts"

const ROUNDS = argument("rounds", 5)
const database = await benchDatabase("contact-search-updates")
try {
  const orgId = await Effect.runPromise(Effect.scoped(Effect.flatMap(
    Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(database.url)))),
    (context) =>
      Effect.provideContext(
        Effect.gen(function*() {
          const orgId = yield* (yield* ApiKeys).createOrg("bench")
          yield* ContactSeed.load([{ orgId, contacts: 200_000 }], { seed: 1 })
          return orgId
        }),
        context
      )
  )))
  const client = new pg.Client({ connectionString: Redacted.value(database.url) })
  await client.connect()
  const time = async (text: string, params: Array<unknown>) => {
    const started = process.hrtime.bigint()
    const result = await client.query(text, params)
    if (result.rowCount !== 50_000) throw new Error(`updated ${result.rowCount} rows, expected 50,000`)
    return Number(process.hrtime.bigint() - started) / 1e6
  }
  const first50k = "org_id = $1 AND contact_id < (SELECT contact_id FROM contacts WHERE org_id = $1 ORDER BY " +
    "contact_id OFFSET 50000 LIMIT 1)"
  let edits = 0
  const searchChange = () =>
    time(
      `UPDATE contacts SET custom_fields = custom_fields || jsonb_build_object('mood', $2::text || contact_id) ` +
        `WHERE ${first50k}`,
      [orgId, `m${++edits}`]
    )
  const countersOnly = () =>
    time(`UPDATE contacts SET conversation_count = conversation_count + 1 WHERE ${first50k}`, [orgId])
  const trigger = (enabled: boolean) =>
    client.query(`ALTER TABLE contacts ${enabled ? "ENABLE" : "DISABLE"} TRIGGER contact_search_update`)
  const times = { search: [[], []] as Array<Array<number>>, counters: [[], []] as Array<Array<number>> }
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? [0, 1] : [1, 0]) {
      await trigger(side === 0)
      await client.query("VACUUM contacts, contact_search")
      times.search[side]!.push(await searchChange())
      times.counters[side]!.push(await countersOnly())
    }
    process.stderr.write(`round ${round + 1}/${ROUNDS}\n`)
  }
  await trigger(true)
  await client.end()
  const row = (name: string, list: Array<Array<number>>) =>
    `| ${name} | ${median(list[0]!).toFixed(0)} | ${median(list[1]!).toFixed(0)} | ` +
    `${median(list[0]!.map((t, i) => t / list[1]![i]!)).toFixed(2)}x |`
  process.stdout.write(
    `${ROUNDS} rounds, 200,000 contacts, load ${os.loadavg()[0]?.toFixed(1)}\n\n` +
      "| update of 50,000 contacts | with the copy's trigger, median ms | without, median ms | ratio |\n" +
      "|---|---:|---:|---:|\n" +
      row("custom fields (search text changes)", times.search) + "\n" +
      row("conversation_count only", times.counters) + "\n\n" +
      `per round (ms): ${JSON.stringify(times)}\n`
  )
} finally {
  await database.close()
}
