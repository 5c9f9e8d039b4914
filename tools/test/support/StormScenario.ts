/**
 * The restart storm itself (issue 30 item 3, decision 0441), shared by its test
 * (tools/test/restartStorm.integration.test.ts) and its bench (tools/bench/replicas.bench.ts):
 *
 * 1. a PostgreSQL with `max_connections` 100 behind PgBouncer in transaction mode (StormCluster), migrated and seeded
 *    (one org, its key, a from-number, contacts);
 * 2. `servers` svc-server and `schedulers` svc-scheduler processes started together; a batch of `tasks` tasks created
 *    through the API on the simulated carrier, the mixed load (StormLoad) started;
 * 3. `storms` times, once a share `firstStormAt` of the batch's tasks is taken (then `stormEvery` more): every process
 *    SIGKILLed at once, and all started again together; each restart timed to all-ready;
 * 4. the load stopped once the batch is all taken, every task of every batch waited for, the processes stopped with
 *    SIGTERM; then the oracle: dials per task from the simulated carrier's own records (every dial request it
 *    received, keyed by the task's idempotency key, as the crash tests count them).
 *
 * Every wait is bounded and says what it saw; every moment a kill lands is placed by the batch's progress.
 */
import { eventually } from "@svc/runtime/test-support/Waiting.ts"
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as Database from "@svc/store/db/Database.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import {
  type Budgets,
  budgetsFor,
  type Cluster,
  type Counts,
  freePort,
  type Kind,
  readyz,
  type Sampler,
  spawnProcess,
  startCluster,
  startSampler,
  type StormProcess
} from "./StormCluster.ts"
import { type LoadResults, request, type ServerSlot, startLoad } from "./StormLoad.ts"

export interface StormSettings {
  readonly servers: number
  readonly schedulers: number
  readonly tasks: number
  readonly storms: number
  /** The share of the batch's tasks taken (no longer pending) before the first storm. */
  readonly firstStormAt: number
  /** The share of the batch's tasks taken after each restart before the next storm. */
  readonly stormEvery: number
  /** PostgreSQL's `max_connections`. */
  readonly maxConnections: number
  /** `SVC_DB_MAX_CONNECTIONS` of every process. */
  readonly processPool: number
  /** PgBouncer's `default_pool_size`. */
  readonly poolerPool: number
  /** PgBouncer's `max_client_conn`. */
  readonly maxClientConnections: number
  /** Whether the processes get `DATABASE_DIRECT_URL` (LISTEN and migrations on PostgreSQL), else poll mode. */
  readonly listen: boolean
  /** The org's `concurrency_limit`. */
  readonly concurrencyLimit: number
  /** `SIMULATED_DIALER_LATENCY_MS`: how long each call holds its line. */
  readonly latencyMs: number
  /** `SCHEDULER_LEASE_MS`. */
  readonly leaseMs: number
  readonly loadClients: number
  readonly contacts: number
  readonly smallBatchTasks: number
  /** Progress lines go here (the bench prints them; the test keeps them for a failure's message). */
  readonly say: (line: string) => void
}

/** The test's and the bench's shape: issue 30 item 3 as written. */
export const defaults: StormSettings = {
  servers: 4,
  schedulers: 4,
  tasks: 20_000,
  storms: 2,
  firstStormAt: 0.2,
  stormEvery: 0.2,
  maxConnections: 100,
  processPool: 10,
  poolerPool: 20,
  maxClientConnections: 100,
  listen: true,
  concurrencyLimit: 100,
  latencyMs: 100,
  leaseMs: 5_000,
  loadClients: 4,
  contacts: 2_000,
  smallBatchTasks: 5,
  say: () => undefined
}

export interface Restart {
  /** Tasks of the batch taken when the processes were killed, and of those still in flight (dialling/unknown). */
  readonly takenAtKill: number
  readonly inFlightAtKill: number
  /** From the spawn of all processes to the last one ready. */
  readonly allReadyMs: number
  /** From the spawn to the first task of the batch taken after it. */
  readonly firstTakenMs: number
}

export interface StormReport {
  readonly settings: Omit<StormSettings, "say">
  /** From the first spawn to all ready. */
  readonly firstStartMs: number
  readonly restarts: ReadonlyArray<Restart>
  /** The batch's tasks taken per second from its first to the first kill. */
  readonly tasksPerSecondBefore: number
  /** From the last restart's first task taken to the batch all taken. */
  readonly tasksPerSecondAfter: number
  /** From the batch's creation to every task of every batch finished and every batch completed. */
  readonly batchMs: number
  readonly budgets: Budgets
  readonly maxima: Counts
  readonly samples: number
  readonly overruns: ReadonlyArray<string>
  readonly load: LoadResults
  /** Connection-budget lines that said "exceeded", and processes that logged no budget line. */
  readonly budgetWarnings: ReadonlyArray<string>
  /** The distinct warnings and errors the processes logged (message only, first 40), with how often: what to read. */
  readonly processWarnings: ReadonlyArray<string>
  /** Exit codes after the final SIGTERM. */
  readonly finalExitCodes: ReadonlyArray<number | null>
  readonly dials: {
    readonly tasks: number
    readonly unfinished: number
    readonly attempts: number
    readonly keys: number
    readonly repeated: number
    readonly foreign: number
    readonly calls: number
    readonly tasksWithoutOneCall: number
    readonly batchesNotCompleted: number
    readonly feedLeft: number
  }
}

const FROM_NUMBER = "+14155550100"
/** The sampler's connection to PostgreSQL: the formula's "admin commands at once" in this deployment. */
const OWN_CONNECTIONS = 1

/** Migrates through the application role (as a deploy step would) and seeds the org the load and the batch use. */
const prepare = (cluster: Cluster, settings: StormSettings) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      ApiKeys.layer.pipe(
        Layer.provideMerge(
          Database.layerFromUrl(Redacted.make(cluster.directUrl("storm-setup")), { maxConnections: 2 })
        )
      )
    )
    return yield* Effect.gen(function*() {
      const keys = yield* ApiKeys
      const orgId = yield* keys.createOrg("storm", settings.concurrencyLimit)
      const key = yield* keys.createKey(orgId)
      yield* keys.addPhoneNumber(orgId, FROM_NUMBER)
      yield* ContactSeed.load([{ orgId, contacts: settings.contacts }], { seed: 1 })
      return { orgId, key }
    }).pipe(Effect.provideContext(context), Effect.orDie)
  })))

/** Runs the storm; throws (with what it saw) when a bounded wait ends unmet or a process dies on its own. */
export const runStorm = async (overrides: Partial<StormSettings> = {}): Promise<StormReport> => {
  const settings: StormSettings = { ...defaults, ...overrides }
  const say = settings.say
  const began = Date.now()
  const cluster = await startCluster(settings)
  const processes: Array<StormProcess> = []
  let sampler: Sampler | undefined
  let load: ReturnType<typeof startLoad> | undefined
  let ticker: ReturnType<typeof setInterval> | undefined
  try {
    const { key } = await prepare(cluster, settings)
    say(`database and pooler ready, seeded in ${Date.now() - began} ms`)
    const budgets = budgetsFor({ ...settings, own: OWN_CONNECTIONS })
    sampler = await startSampler(cluster, budgets, 100)
    const slots: Array<ServerSlot> = []
    for (let i = 0; i < settings.servers; i++) slots.push({ port: await freePort(), up: false, generation: 0 })
    const processSettings = {
      cluster,
      processPool: settings.processPool,
      listen: settings.listen,
      latencyMs: settings.latencyMs,
      leaseMs: settings.leaseMs
    }
    const kinds: Array<{ kind: Kind; index: number }> = [
      ...Array.from({ length: settings.servers }, (_, index) => ({ kind: "server" as const, index })),
      ...Array.from({ length: settings.schedulers }, (_, index) => ({ kind: "scheduler" as const, index }))
    ]
    const alive = () => processes.filter((p) => p.exit === undefined)
    const state = () =>
      processes.filter((p) => p.exit === undefined || !p.stopping).map((p) =>
        `${p.name}: ${p.exit ? `exited ${JSON.stringify(p.exit)}` : p.readyAt ? "ready" : "starting"}; ` +
        `${p.tail.slice(-400)}`
      )
    /** A process that exits unless the test killed or stopped it is the product failing: stop there. */
    const assertNoneDied = () => {
      sampler!.check()
      const died = processes.find((p) => p.exit !== undefined && !p.stopping)
      if (died !== undefined) {
        throw new Error(`${died.name} exited on its own (${JSON.stringify(died.exit)}):\n${died.tail}`)
      }
    }
    const wait = (what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number) =>
      eventually(
        async () => {
          assertNoneDied()
          return condition()
        },
        what,
        { timeoutMs, everyMs: 50, state }
      )

    /** Spawns every process of `generation` at once and waits until each is ready; returns how long that took. */
    const startAll = async (generation: number) => {
      const spawnedAt = Date.now()
      for (const { index, kind } of kinds) {
        processes.push(
          spawnProcess(processSettings, kind, index, generation, kind === "server" ? slots[index]!.port : undefined)
        )
      }
      const current = processes.filter((p) => p.generation === generation)
      await wait(`every process of generation ${generation} ready`, async () => {
        await Promise.all(
          current.filter((p) => p.kind === "server" && p.readyAt === undefined).map(async (p) => {
            if (await readyz(p.port!) === 200) {
              p.readyAt ??= Date.now()
              slots[p.index]!.up = true
            }
          })
        )
        return current.every((p) => p.readyAt !== undefined)
      }, 180_000)
      return Math.max(...current.map((p) => p.readyAt!)) - spawnedAt
    }

    const firstStartMs = await startAll(0)
    say(`generation 0: all ${kinds.length} processes ready in ${firstStartMs} ms`)

    // The batch, through the API: a 503 while a server settles is retried as its Retry-After says.
    const batchCreatedAt = Date.now()
    let batchCallId: string | undefined
    await wait("the batch created through the API", async () => {
      const answer = await request(slots[0]!.port, "POST", "/create-batch-call", key, {
        from_number: FROM_NUMBER,
        tasks: Array.from({ length: settings.tasks }, (_, i) => ({ to_number: `+4420${String(i).padStart(8, "0")}` }))
      }, 120_000)
      if (answer.status === 200) batchCallId = (JSON.parse(answer.body) as { batch_call_id: string }).batch_call_id
      else if (answer.status !== 503 || answer.retryAfter === undefined) {
        throw new Error(`create-batch-call answered ${answer.status}: ${answer.body.slice(0, 500)}`)
      }
      return batchCallId !== undefined
    }, 120_000)
    sampler.watch(batchCallId!)
    say(`batch ${batchCallId} of ${settings.tasks} tasks created in ${Date.now() - batchCreatedAt} ms`)
    // a line every 10 s while the batch runs: where a slow run spent its time
    ticker = setInterval(() => {
      const last = sampler!.samples.at(-1)
      say(
        `  ${last?.taken ?? 0} taken; connections ${JSON.stringify(last?.counts ?? {})}; answers ` +
          `${load?.results.answered ?? 0}, 503 ${load?.results.unavailable ?? 0}, no answer while down ` +
          `${load?.results.noAnswerWhileDown ?? 0}, unexpected ${load?.results.unexpectedCount ?? 0}`
      )
    }, 10_000)
    load = startLoad({
      slots,
      key,
      fromNumber: FROM_NUMBER,
      batchCallId: batchCallId!,
      clients: settings.loadClients,
      smallBatchTasks: settings.smallBatchTasks
    })

    const takenNow = async () => {
      const result = await sampler!.query<{ taken: number; in_flight: number }>(
        `SELECT count(*) FILTER (WHERE state <> 'pending')::int4 AS taken,
           count(*) FILTER (WHERE state IN ('dialling', 'unknown'))::int4 AS in_flight
         FROM batch_call_tasks WHERE batch_call_id = $1`,
        [batchCallId]
      )
      return result.rows[0]!
    }
    const waitTaken = (target: number, what: string) =>
      wait(`${what}: ${target} tasks of the batch taken`, async () => (await takenNow()).taken >= target, 240_000)

    await waitTaken(1, "dialling began")
    const firstTaken = { at: Date.now(), taken: (await takenNow()).taken }
    let target = Math.round(settings.tasks * settings.firstStormAt)
    let beforeRate = 0
    const restarts: Array<Restart> = []
    for (let storm = 1; storm <= settings.storms; storm++) {
      await waitTaken(target, `before storm ${storm}`)
      for (const slot of slots) {
        slot.up = false
        slot.generation++
      }
      const victims = alive()
      for (const p of victims) p.stopping = true
      for (const p of victims) p.child.kill("SIGKILL")
      const killedAt = Date.now()
      const atKill = await takenNow()
      if (storm === 1) beforeRate = (atKill.taken - firstTaken.taken) / ((killedAt - firstTaken.at) / 1_000)
      await Promise.all(victims.map((p) => p.exited))
      say(
        `storm ${storm}: ${victims.length} processes SIGKILLed with ${atKill.taken} tasks taken, ` +
          `${atKill.in_flight} in flight`
      )
      const spawnedAt = Date.now()
      const allReadyMs = await startAll(storm)
      await waitTaken(atKill.taken + 1, `after storm ${storm}`)
      const firstTakenMs = Date.now() - spawnedAt
      restarts.push({ takenAtKill: atKill.taken, inFlightAtKill: atKill.in_flight, allReadyMs, firstTakenMs })
      say(`storm ${storm}: all ready in ${allReadyMs} ms, dialling again ${firstTakenMs} ms after the spawn`)
      target = (await takenNow()).taken + Math.round(settings.tasks * settings.stormEvery)
    }
    const afterFrom = { at: Date.now(), taken: (await takenNow()).taken }
    await waitTaken(settings.tasks, "the end")
    const tasksPerSecondAfter = (settings.tasks - afterFrom.taken) /
      Math.max(0.001, (Date.now() - afterFrom.at) / 1_000)
    const loadResults = await load.stop()
    load = undefined
    say(`batch all taken; load stopped after ${loadResults.answered} answers`)

    // Every task of every batch finished, every recorded call fed to its contact, and every batch completed. A
    // batch's completion follows its last task's record in a statement of its own: two workers recording a batch's
    // last tasks at once each see the other's task still dialling, a worker killed between the two statements never
    // runs it, and in both cases the next dispatch pass that finds the batch dry completes it (Recorder.ts, at most
    // IDLE_RECHECK_MS later). Stopping the processes the moment the last task is final left that pass to nobody (CI
    // saw 2 batches left in progress so). Waited for, bounded, so a batch that never completes still fails the run.
    const left = async () => {
      const result = await sampler!.query<{ n: number }>(
        `SELECT (SELECT count(*)::int4 FROM batch_call_tasks
            WHERE state NOT IN ('completed', 'failed', 'skipped', 'cancelled'))
          + (SELECT count(*)::int4 FROM contact_feed)
          + (SELECT count(*)::int4 FROM batch_calls WHERE status NOT IN ('completed', 'cancelled')) AS n`
      )
      return result.rows[0]!.n
    }
    await wait(
      "every task of every batch finished and fed, every batch completed",
      async () => (await left()) === 0,
      180_000
    )
    const batchMs = Date.now() - batchCreatedAt

    const running = alive()
    for (const p of running) p.stopping = true
    for (const p of running) p.child.kill("SIGTERM")
    const finalExitCodes = (await Promise.all(running.map((p) => p.exited))).map((e) => e.code)
    await sampler.stop()

    const budgetWarnings: Array<string> = []
    for (const p of processes) {
      // servers log at Warn (above): only a scheduler's Info line is there to miss
      if (p.kind === "scheduler" && p.budgetLines.length === 0) {
        budgetWarnings.push(`${p.name} logged no connection budget line`)
      }
      for (const line of p.budgetLines) if (line.includes("exceeded")) budgetWarnings.push(`${p.name}: ${line}`)
    }
    const warnings = new Map<string, number>()
    for (const p of processes) {
      for (const line of p.warnings) {
        let message = line
        try {
          message = `${p.kind}: ${String((JSON.parse(line) as { message: unknown }).message)}`
        } catch {
          message = `${p.kind}: ${line}`
        }
        warnings.set(message, (warnings.get(message) ?? 0) + 1)
      }
    }
    const processWarnings = [...warnings].slice(0, 40).map(([message, n]) => `${n} x ${message.slice(0, 300)}`)
    const dials = await oracle(cluster)
    return {
      settings: (({ say: _, ...rest }) => rest)(settings),
      firstStartMs,
      restarts,
      tasksPerSecondBefore: beforeRate,
      tasksPerSecondAfter,
      batchMs,
      budgets,
      maxima: sampler.maxima,
      samples: sampler.samples.length,
      overruns: sampler.overruns,
      load: loadResults,
      budgetWarnings,
      processWarnings,
      finalExitCodes,
      dials
    }
  } finally {
    clearInterval(ticker)
    await load?.stop().catch(() => undefined)
    for (const p of processes) if (p.exit === undefined) p.child.kill("SIGKILL")
    await Promise.all(processes.map((p) => p.exited))
    await sampler?.stop().catch(() => undefined)
    await cluster.close()
  }
}

/**
 * Exactly once and none lost, from the simulated carrier's records (every dial request it received, shared by all
 * processes) against the tasks: each task's key reached the carrier once, no key twice, no key of no task; every task
 * finished with one recorded call; every batch completed; every call fed.
 */
const oracle = async (cluster: Cluster) => {
  const client = new pg.Client({ connectionString: cluster.superUrl })
  await client.connect()
  try {
    const { rows } = await client.query<StormReport["dials"]>(`
      SELECT
        (SELECT count(*)::int4 FROM batch_call_tasks) AS tasks,
        (SELECT count(*)::int4 FROM batch_call_tasks WHERE state NOT IN ('completed', 'failed')) AS unfinished,
        (SELECT count(*)::int4 FROM simulated_dialer_attempts) AS attempts,
        (SELECT count(DISTINCT idempotency_key)::int4 FROM simulated_dialer_attempts) AS keys,
        (SELECT count(*)::int4 FROM (
          SELECT 1 FROM simulated_dialer_attempts GROUP BY idempotency_key HAVING count(*) > 1) r) AS repeated,
        (SELECT count(*)::int4 FROM simulated_dialer_attempts a WHERE NOT EXISTS (
          SELECT 1 FROM batch_call_tasks t WHERE t.task_id::text = a.idempotency_key)) AS foreign,
        (SELECT count(*)::int4 FROM calls WHERE batch_call_id IS NOT NULL) AS calls,
        (SELECT count(*)::int4 FROM batch_call_tasks t LEFT JOIN (
          SELECT task_id, count(*) AS n FROM calls WHERE task_id IS NOT NULL GROUP BY task_id) c USING (task_id)
          WHERE coalesce(c.n, 0) <> 1) AS "tasksWithoutOneCall",
        (SELECT count(*)::int4 FROM batch_calls WHERE status <> 'completed') AS "batchesNotCompleted",
        (SELECT count(*)::int4 FROM contact_feed) AS "feedLeft"`)
    return rows[0]!
  } finally {
    await client.end()
  }
}
