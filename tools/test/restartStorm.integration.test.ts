// A restart storm survived (issue 30 item 3, decision 0441): 4 svc-server and 4 svc-scheduler processes on one
// PostgreSQL with max_connections = 100, reached through PgBouncer in pool_mode = transaction with
// DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL on PostgreSQL itself (the shape docs/operations.md
// recommends: LISTEN and migrations direct, everything else pooled). Mixed API load (list-contacts, list-calls,
// get-batch-call, small create-batch-calls) plus a 20,000-task batch on the simulated carrier; twice, once the batch
// has made progress, all 8 processes are SIGKILLed at once and started again together. Then:
// - 0 tasks dialled twice and 0 lost, counted in the simulated carrier's own records (every dial request it received,
//   keyed by the task's id, shared by all processes: the crash tests' oracle) against every task of every batch;
// - no API answer but 2xx or 503 with Retry-After, before, during and after the restarts (a request that finds its
//   server killed or not yet listening gets no answer at all: counted apart, and allowed only then);
// - every connection count under its budget (docs/operations.md, "The connection budget") at every sample of
//   pg_stat_activity and of PgBouncer's SHOW POOLS / SHOW CLIENTS, taken every 100 ms throughout.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { budgetsFor } from "./support/StormCluster.ts"
import { defaults, runStorm } from "./support/StormScenario.ts"

describe("restart storm", () => {
  it.live(
    "8 processes SIGKILLed together twice through PgBouncer: 0 dialled twice, 0 lost, only 2xx or 503 with " +
      "Retry-After, every connection count within its budget",
    () =>
      Effect.gen(function*() {
        const progress: Array<string> = []
        const report = yield* Effect.promise(() =>
          runStorm({ say: (line) => progress.push(`${new Date().toISOString()} ${line}`) })
        )
        const seen = `\n${progress.join("\n")}`

        // the storm happened as planned: twice, while the batch was being dialled
        assert.strictEqual(report.restarts.length, 2, seen)
        for (const restart of report.restarts) {
          assert.isAbove(restart.takenAtKill, 0, `a kill before the batch began${seen}`)
          assert.isBelow(restart.takenAtKill, defaults.tasks, `a kill after the batch was all taken${seen}`)
        }

        // exactly once, none lost: every task finished, each dialled once and recorded with one call
        const dials = report.dials
        assert.isAtLeast(dials.tasks, defaults.tasks, seen)
        assert.deepStrictEqual(
          { attempts: dials.attempts, keys: dials.keys, repeated: dials.repeated, foreign: dials.foreign },
          { attempts: dials.tasks, keys: dials.tasks, repeated: 0, foreign: 0 },
          `dial requests per task${seen}`
        )
        assert.deepStrictEqual(
          {
            unfinished: dials.unfinished,
            tasksWithoutOneCall: dials.tasksWithoutOneCall,
            calls: dials.calls,
            batchesNotCompleted: dials.batchesNotCompleted,
            feedLeft: dials.feedLeft
          },
          { unfinished: 0, tasksWithoutOneCall: 0, calls: dials.tasks, batchesNotCompleted: 0, feedLeft: 0 },
          `tasks lost${seen}`
        )

        // the API: only 2xx or 503 with Retry-After, and it did serve through the storm
        assert.deepStrictEqual(report.load.unexpected, [], `unexpected answers${seen}`)
        assert.strictEqual(report.load.unexpectedCount, 0)
        for (const [operation, served] of Object.entries(report.load.served)) {
          assert.isAbove(served, 0, `${operation} never served${seen}`)
        }
        assert.isAbove(report.load.noAnswerWhileDown, 0, `the load never met a killed server: no storm seen${seen}`)

        // connections: the budgets are docs/operations.md's formulas with this deployment's numbers
        assert.deepStrictEqual(
          report.budgets,
          budgetsFor({
            servers: 4,
            schedulers: 4,
            processPool: 10,
            poolerPool: 20,
            listen: true,
            own: 1
          })
        )
        // 20 + 2 x 4 + 8 + 1: under max_connections less the 3 superuser slots, so the formula is the tighter bound
        assert.strictEqual(report.budgets.postgresTotal, 37)
        assert.deepStrictEqual(report.overruns, [], `connection counts over budget${seen}`)
        assert.isAtLeast(report.samples, 300, "sampled throughout")
        // the samples saw the deployment at work (a sampler that counted nothing would pass every budget)
        assert.isAtLeast(report.maxima.poolerClients, 4 * 2, `pooler clients seen${seen}`)
        assert.isAtLeast(report.maxima.pooledBackends, 2, `pooled backends seen${seen}`)
        assert.isAtLeast(report.maxima.directPerScheduler, 1, `schedulers' LISTEN connections seen${seen}`)
        // each process said its budget at start, and none said it was exceeded
        assert.deepStrictEqual(report.budgetWarnings, [], seen)

        // the last generation stopped gracefully on SIGTERM
        assert.deepStrictEqual(report.finalExitCodes, Array.from({ length: 8 }, () => 0), seen)
      }),
    // about 2.5-3 min on the two-core machine under other test runs; the run's own waits are bounded and say what
    // they saw, this only stops a run that a machine far busier than that cannot finish
    600_000
  )
})
