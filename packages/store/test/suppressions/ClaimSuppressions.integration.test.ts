// The claim honours the suppression list (issue 31 item 5, decision 0550): a task whose number is on the org's list
// ends `skipped` with `state_reason` `suppressed (<source>)` and is never dialled, and a suppression binds every claim
// that begins after its create answered ("0 dials after commit"). The second test interleaves two or three claim
// loops (DispatchRepo.claim, each transaction on its own pooled connection) with creates at random moments, over
// many seeded iterations (the seed is in the test's name; SVC_SUPPRESSION_SEED replays another, SVC_SUPPRESSION_RUNS
// sets the count). The order of events is a counter stamped in this process: a create's stamp after its COMMIT
// answered, a claim's before its first statement is sent, so "began after" is exact, not a reading of clocks.
import { assert, layer } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { E164 } from "@svc/domain/models/E164.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../../src/batches/BatchCallsRepo.ts"
import { DispatchRepo } from "../../src/dispatch/DispatchRepo.ts"
import { insertSuppression } from "../../src/suppressions/index.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const Layers = Layer.mergeAll(BatchCallsRepo.layer, DispatchRepo.layer).pipe(Layer.provideMerge(TestDatabase.layer))

const NOW = 1_000_000
const SEED = Number(process.env["SVC_SUPPRESSION_SEED"] ?? 31_0550)
const RUNS = Number(process.env["SVC_SUPPRESSION_RUNS"] ?? 200)
const number = Schema.decodeUnknownSync(E164)
let orgs = 0

/** mulberry32, as the JSON fuzz: small, fast, deterministic. */
const prng = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (n: number) => Math.floor(next() * n) }
}

/** An org (limit 1,000: slots never bind here) with one batch of `numbers`, and that batch as the claim sees it. */
const seedBatch = (numbers: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BatchCallsRepo
    const orgId = OrgId.make(`org_supp_claim_${++orgs}`)
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, 'x', 1000, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, '+14155550100', 0)`
    const batch = yield* repo.create(
      orgId,
      "key",
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: "+14155550100",
        tasks: numbers.map((to_number) => ({ to_number }))
      }),
      { maxTasks: 10_000, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    const due = (yield* (yield* DispatchRepo).findDue(NOW, 10_000)).due.filter((b) => b.orgId === orgId)
    assert.strictEqual(due.length, 1)
    return { orgId, batchCallId: batch.batch_call_id, due }
  })

const tasksOf = (batchCallId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ to_number: string; state: string; state_reason: string | null }>`
      SELECT to_number, state, state_reason FROM batch_call_tasks WHERE batch_call_id = ${batchCallId}
      ORDER BY task_index`)

const numbersOf = (count: number, base: number) =>
  Array.from({ length: count }, (_, i) => `+1212${String(base + i).padStart(7, "0")}`)

layer(Layers, { timeout: 600_000 })("DispatchRepo.claim with a suppression list", (it) => {
  it.effect("skips each suppressed number as suppressed (<source>) and dials the others", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const numbers = numbersOf(10, 0)
      const { batchCallId, due, orgId } = yield* seedBatch(numbers)
      yield* insertSuppression(sql, { orgId, phoneNumber: number(numbers[1]!), source: "api", now: 1 })
      yield* insertSuppression(sql, { orgId, phoneNumber: number(numbers[4]!), source: "national_dnc", now: 1 })
      yield* insertSuppression(sql, { orgId, phoneNumber: number(numbers[8]!), source: "opt_out", now: 1 })
      // another org's list does not bind this org
      const other = yield* seedBatch(["+13125550000"])
      yield* insertSuppression(sql, { orgId: other.orgId, phoneNumber: number(numbers[0]!), source: "api", now: 1 })

      const repo = yield* DispatchRepo
      const result = yield* repo.claim(orgId, due, { owner: "w1", now: NOW, leaseMs: 30_000, maxPerBatch: 100 })
      assert.strictEqual(result.skipped, 3)
      assert.strictEqual(result.suppressed, 3)
      assert.deepStrictEqual(
        result.claimed.map((t) => t.request.to_number),
        numbers.filter((_, i) => ![1, 4, 8].includes(i))
      )
      const states = yield* tasksOf(batchCallId)
      assert.deepStrictEqual(states.filter((t) => t.state === "skipped"), [
        { to_number: numbers[1]!, state: "skipped", state_reason: "suppressed (api)" },
        { to_number: numbers[4]!, state: "skipped", state_reason: "suppressed (national_dnc)" },
        { to_number: numbers[8]!, state: "skipped", state_reason: "suppressed (opt_out)" }
      ])
      assert.strictEqual(states.filter((t) => t.state === "dialling").length, 7)
      // nothing is left to claim: a skipped task is never dialled later
      const again = yield* repo.claim(orgId, due, { owner: "w1", now: NOW, leaseMs: 30_000, maxPerBatch: 100 })
      assert.strictEqual(again.claimed.length, 0)
    }))

  it.effect(
    `no claim that begins after a suppression's create answered dials its number (seed ${SEED}, ${RUNS} runs)`,
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* DispatchRepo
        let skippedBySuppression = 0
        let dialledBeforeCommit = 0
        let claimsAfterACommit = 0
        for (let run = 0; run < RUNS; run++) {
          const r = prng(SEED + run)
          const context = `seed ${SEED + run} (run ${run})`
          const numbers = numbersOf(20 + r.int(21), run * 100)
          const { batchCallId, due, orgId } = yield* seedBatch(numbers)
          const workers = 2 + r.int(2)
          const maxPerBatch = 1 + r.int(3)
          // numbers of the batch to suppress, in a random order, and one number not in it
          const chosen = [...numbers].sort(() => r.next() - 0.5).slice(0, 1 + r.int(8))
          chosen.push("+19995550000")
          // the random moments: round trips and yields before each create, drawn up front (the fibers' own
          // interleaving is the database's)
          const pauses = chosen.map(() => ({ trips: r.int(4), yields: r.int(20) }))

          let seq = 0
          const committed = new Map<string, number>()
          const claims: Array<{ readonly began: number; readonly dialled: ReadonlyArray<string> }> = []
          let finished = 0

          const creator = Effect.gen(function*() {
            for (let i = 0; i < chosen.length; i++) {
              for (let t = 0; t < pauses[i]!.trips; t++) yield* sql`SELECT 1`
              for (let y = 0; y < pauses[i]!.yields; y++) yield* Effect.yieldNow
              yield* insertSuppression(sql, {
                orgId,
                phoneNumber: number(chosen[i]!),
                source: i % 2 === 0 ? "api" : "national_dnc",
                now: NOW
              })
              committed.set(chosen[i]!, ++seq)
            }
          })
          const worker = (w: number) =>
            Effect.gen(function*() {
              for (let n = 0; n < 10_000; n++) {
                const began = ++seq
                const result = yield* repo.claim(orgId, due, { owner: `w${w}`, now: NOW, leaseMs: 30_000, maxPerBatch })
                claims.push({ began, dialled: result.claimed.map((t) => t.request.to_number) })
                // under the org's lock claims take turns: one that finds nothing (and was not kept waiting) has
                // seen the batch run dry
                if (!result.busy && result.claimed.length + result.skipped + result.deferred === 0) return
              }
              throw new Error(`${context}: worker ${w} claimed for 10,000 rounds`)
            }).pipe(Effect.ensuring(Effect.sync(() => finished++)))

          yield* Effect.all([creator, ...Array.from({ length: workers }, (_, w) => worker(w))], {
            concurrency: "unbounded"
          })

          const violations: Array<string> = []
          for (const claim of claims) {
            for (const to of claim.dialled) {
              const at = committed.get(to)
              if (at !== undefined && claim.began > at) {
                violations.push(`${to} dialled by a claim begun at ${claim.began}, after its create at ${at}`)
              }
              if (at !== undefined && claim.began < at) dialledBeforeCommit++
            }
            if ([...committed.values()].some((at) => at < claim.began)) claimsAfterACommit++
          }
          assert.deepStrictEqual(violations, [], context)

          // every task ended once: dialled by exactly one claim, or skipped as suppressed
          const tasks = yield* tasksOf(batchCallId)
          const dialled = claims.flatMap((c) => c.dialled)
          assert.strictEqual(new Set(dialled).size, dialled.length, `${context}: a number dialled twice`)
          for (const task of tasks) {
            if (task.state === "skipped") {
              skippedBySuppression++
              assert.isTrue(committed.has(task.to_number), `${context}: ${task.to_number} skipped, never suppressed`)
              assert.strictEqual(
                task.state_reason,
                `suppressed (${chosen.indexOf(task.to_number) % 2 === 0 ? "api" : "national_dnc"})`,
                context
              )
              assert.notInclude(dialled, task.to_number, context)
            } else {
              assert.strictEqual(task.state, "dialling", `${context}: ${task.to_number}`)
              assert.include(dialled, task.to_number, context)
            }
          }
          assert.strictEqual(finished, workers, context)
          yield* sql`DELETE FROM orgs WHERE org_id = ${orgId}`
        }
        // the runs reached both sides of the race: numbers skipped by the list, and numbers a claim took before the
        // create answered (the guarantee is about claims that begin after it), with claims running after commits
        assert.isAbove(skippedBySuppression, RUNS, `skipped by suppression: ${skippedBySuppression}`)
        assert.isAbove(dialledBeforeCommit, 0, `dialled before the create answered: ${dialledBeforeCommit}`)
        assert.isAbove(claimsAfterACommit, RUNS, `claims begun after a create answered: ${claimsAfterACommit}`)
      }),
    // many runs on a loaded machine: the bound is generous, the runs themselves wait on nothing but the database
    600_000
  )
})
