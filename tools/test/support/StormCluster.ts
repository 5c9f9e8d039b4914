/**
 * The parts of the restart storm (issue 30 item 3, decision 0441): one PostgreSQL with a small `max_connections`,
 * reached by an ordinary role (not a superuser: the reserved slots are not its to use, as on a managed server), a
 * PgBouncer in `pool_mode = transaction` in front of it, `svc-server` and `svc-scheduler` processes spawned with the
 * pooled shape docs/operations.md recommends ("Running at scale"), and a sampler that counts every connection at
 * PostgreSQL (`pg_stat_activity`) and at the pooler (its admin console's `SHOW POOLS` and `SHOW CLIENTS`) against
 * its budget.
 *
 * Every process gets its own `application_name` (`storm-<kind>-<index>-g<generation>` on the pooled URL, the same
 * with `-direct` on the direct one; @effect/sql-pg reads it from the URL's query), so a sample attributes each
 * connection to the process that opened it, and a restarted process never shares a name with the one it replaced.
 */
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import * as PgBouncer from "@svc/store/test-support/PgBouncer.ts"
import { Effect, Exit, Redacted, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const root = path.resolve(import.meta.dirname, "..", "..", "..")
const mains = {
  server: path.join(root, "apps/server/src/main.ts"),
  scheduler: path.join(root, "apps/scheduler/src/main.ts")
} as const

/** The application's role and database on the storm's server. */
export const APP_ROLE = "storm"
const APP_DATABASE = "storm"

/** PostgreSQL's default `superuser_reserved_connections` (the embedded server keeps it; `reserved_connections` 0). */
export const SUPERUSER_RESERVED = 3

export type Kind = "server" | "scheduler"

/** `url` with another user, password, database or application name. */
const withUrl = (
  url: string,
  change: { user?: string; password?: string; database?: string; applicationName?: string }
) => {
  const parsed = new URL(url)
  if (change.user !== undefined) parsed.username = encodeURIComponent(change.user)
  if (change.password !== undefined) parsed.password = encodeURIComponent(change.password)
  if (change.database !== undefined) parsed.pathname = `/${change.database}`
  if (change.applicationName !== undefined) parsed.searchParams.set("application_name", change.applicationName)
  return parsed.toString()
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
    server.once("error", reject)
  })

/** The storm's PostgreSQL and pooler. */
export interface Cluster {
  /** The superuser on the application's database, directly: the sampler's and the checks' connection. */
  readonly superUrl: string
  /** The application role on PostgreSQL itself: `DATABASE_DIRECT_URL`, and the setup's migrations and seed. */
  readonly directUrl: (applicationName: string) => string
  /** The application role through the pooler: `DATABASE_URL`. */
  readonly pooledUrl: (applicationName: string) => string
  /** The pooler's admin console (`stats_users`), for `SHOW POOLS` / `SHOW CLIENTS`. */
  readonly consoleConfig: pg.ClientConfig
  readonly close: () => Promise<void>
}

export interface ClusterOptions {
  readonly maxConnections: number
  /** PgBouncer's `default_pool_size`: its server connections for the one (database, user). */
  readonly poolerPool: number
  readonly maxClientConnections: number
}

/**
 * An embedded PostgreSQL of its own with `max_connections` as given, an ordinary role owning the application's
 * (empty) database, and a PgBouncer in transaction mode in front of it that lets that role read its admin console.
 */
export const startCluster = async (options: ClusterOptions): Promise<Cluster> => {
  const scope = Scope.makeUnsafe()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-storm-pg-"))
  fs.chmodSync(dataDir, 0o755)
  let pooler: PgBouncer.PgBouncer | undefined
  const close = async () => {
    await pooler?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const external = EmbeddedPostgres.layout(dataDir).externalHome
    if (external !== undefined) fs.rmSync(external, { recursive: true, force: true })
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const server = await Effect.runPromise(
      Scope.provide(
        EmbeddedPostgres.start({ dataDir, settings: { max_connections: String(options.maxConnections) } }),
        scope
      )
    )
    const serverUrl = Redacted.value(server.url)
    // hex: nothing to quote in the statement below
    const password = crypto.randomBytes(16).toString("hex")
    const setup = new pg.Client({ connectionString: withUrl(serverUrl, { applicationName: "storm-setup" }) })
    await setup.connect()
    try {
      await setup.query(`CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER PASSWORD '${password}'`)
      await setup.query(`CREATE DATABASE ${APP_DATABASE} OWNER ${APP_ROLE}`)
    } finally {
      await setup.end()
    }
    const direct = withUrl(serverUrl, { user: APP_ROLE, password, database: APP_DATABASE })
    pooler = await PgBouncer.start(direct, {
      poolSize: options.poolerPool,
      maxClientConnections: options.maxClientConnections,
      statsUsers: [APP_ROLE]
    })
    const pooledBase = pooler.url
    return {
      superUrl: withUrl(serverUrl, { database: APP_DATABASE, applicationName: "storm-sampler" }),
      directUrl: (name) => withUrl(direct, { applicationName: name }),
      pooledUrl: (name) => withUrl(pooledBase, { applicationName: name }),
      consoleConfig: {
        host: "127.0.0.1",
        port: pooler.port,
        user: APP_ROLE,
        password,
        database: "pgbouncer",
        application_name: "storm-console"
      },
      close
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** One spawned `svc-server` or `svc-scheduler`, and what it said that the storm reads. */
export interface StormProcess {
  readonly kind: Kind
  readonly index: number
  readonly generation: number
  /** Its `application_name` on the pooled URL; `<name>-direct` on the direct one. */
  readonly name: string
  /** The HTTP port of a server. */
  readonly port: number | undefined
  readonly child: ChildProcess
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** Set when it exits. */
  exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
  /** Whether this test killed or stopped it (an exit otherwise is a failure of the product). */
  stopping: boolean
  /** When it was ready: a server's `/readyz` answered 200; a scheduler logged `svc-scheduler started`. */
  readyAt: number | undefined
  readonly spawnedAt: number
  /** Its connection-budget line(s) at start (ConnectionBudget). */
  readonly budgetLines: Array<string>
  /** Its log lines at Warn and above. */
  readonly warnings: Array<string>
  /** The last few KB of its output. */
  tail: string
}

export interface ProcessSettings {
  readonly cluster: Cluster
  /** `SVC_DB_MAX_CONNECTIONS` */
  readonly processPool: number
  /** Whether `DATABASE_DIRECT_URL` is set (LISTEN and migrations on PostgreSQL itself), else poll mode. */
  readonly listen: boolean
  readonly latencyMs: number
  readonly leaseMs: number
}

/** The environment without anything of a surrounding test run or shell that would steer the process elsewhere. */
const cleanEnv = () => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue
    if (/^(DATABASE_|REDIS_URL$|SVC_|SCHEDULER_|SIMULATED_DIALER_|TWILIO_|PORT$|HOST$|LOG_LEVEL$)/.test(key)) continue
    env[key] = value
  }
  return env
}

/** Spawns the `index`th process of `kind`, incarnation `generation`; a server on `port`. */
export const spawnProcess = (
  settings: ProcessSettings,
  kind: Kind,
  index: number,
  generation: number,
  port: number | undefined
): StormProcess => {
  const name = `storm-${kind}-${index}-g${generation}`
  const env: Record<string, string> = {
    ...cleanEnv(),
    DATABASE_URL: settings.cluster.pooledUrl(name),
    DATABASE_POOL_MODE: "transaction",
    ...(settings.listen ? { DATABASE_DIRECT_URL: settings.cluster.directUrl(`${name}-direct`) } : {}),
    SVC_DB_MAX_CONNECTIONS: String(settings.processPool),
    // a scheduler's start ("svc-scheduler started") and budget lines are Info; a server logs every request at Info,
    // so it logs warnings only (a budget exceeded is one)
    LOG_LEVEL: kind === "scheduler" ? "Info" : "Warn",
    ...(kind === "server"
      ? {
        PORT: String(port),
        HOST: "127.0.0.1",
        // the storm is about restarts, not per-key rate limits: the load's one key must never meet a 429
        SVC_RATE_LIMIT: "100000000"
      }
      : {
        // a worker id per incarnation, as a pod name is: a restarted worker cannot tell that its predecessor is
        // gone (decision 0402's pid check applies only to default ids), so the dead workers' tasks wait for their
        // leases and are reconciled, the path a restart of every pod takes in production
        SCHEDULER_WORKER_ID: name,
        SCHEDULER_LEASE_MS: String(settings.leaseMs),
        SCHEDULER_POLL_MS: "200",
        SCHEDULER_RECONCILE_RECHECK_MS: "300",
        SCHEDULER_SHUTDOWN_GRACE_MS: "2000",
        SCHEDULER_BACKFILL_CRON: "off",
        SIMULATED_DIALER_STORE: "sql",
        SIMULATED_DIALER_SEED: "42",
        SIMULATED_DIALER_LATENCY_MS: String(settings.latencyMs)
      })
  }
  const child = spawn(process.execPath, [mains[kind]], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
  const proc: StormProcess = {
    kind,
    index,
    generation,
    name,
    port,
    child,
    exited: new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))),
    exit: undefined,
    stopping: false,
    readyAt: undefined,
    spawnedAt: Date.now(),
    budgetLines: [],
    warnings: [],
    tail: ""
  }
  void proc.exited.then((exit) => proc.exit = exit)
  let pending = ""
  const onLine = (line: string) => {
    if (line.includes("connection budget")) proc.budgetLines.push(line)
    if (/"level":"(WARN|ERROR|FATAL)"/.test(line) || !line.startsWith("{")) proc.warnings.push(line.slice(0, 600))
    if (kind === "scheduler" && proc.readyAt === undefined && line.includes("svc-scheduler started")) {
      proc.readyAt = Date.now()
    }
  }
  const take = (chunk: Buffer) => {
    const text = chunk.toString()
    proc.tail = (proc.tail + text).slice(-3_000)
    pending += text
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) if (line.trim() !== "") onLine(line)
  }
  child.stdout?.on("data", take)
  child.stderr?.on("data", take)
  return proc
}

/** GET `/readyz` of a server: its status, or 0 when nothing answers. */
export const readyz = (port: number) =>
  new Promise<number>((resolve) => {
    const request = http.get({ host: "127.0.0.1", port, path: "/readyz", agent: false, timeout: 5_000 }, (response) => {
      response.resume()
      response.once("end", () => resolve(response.statusCode ?? 0))
      response.once("error", () => resolve(0))
    })
    request.once("timeout", () => request.destroy())
    request.once("error", () => resolve(0))
  })

/** What one sample counted, and the budget each count is held to (docs/operations.md, "The connection budget"). */
export interface Budgets {
  /** Client backends at PostgreSQL, all roles: the formula's left side. */
  readonly postgresTotal: number
  /** The application role's backends opened by the pooler: `default_pool_size`. */
  readonly pooledBackends: number
  /** Direct (LISTEN and migration) backends of one scheduler / one server. */
  readonly directPerScheduler: number
  readonly directPerServer: number
  /** The pooler's server connections (SHOW POOLS `sv_*`). */
  readonly poolerServers: number
  /** The pooler's client connections from the processes (SHOW POOLS `cl_*`): Σ SVC_DB_MAX_CONNECTIONS. */
  readonly poolerClients: number
  /** One process's client connections at the pooler (SHOW CLIENTS by application_name): SVC_DB_MAX_CONNECTIONS. */
  readonly poolerClientsPerProcess: number
}

export type Counts = { -readonly [K in keyof Budgets]: number }

export interface Sample {
  readonly at: number
  readonly counts: Counts
  /** The big batch's tasks no longer pending, when a batch is watched. */
  readonly taken: number
}

/**
 * The budgets of the storm's deployment: every formula of docs/operations.md with this deployment's numbers.
 * `own` is the test's own connections to PostgreSQL (its sampler; the formula's "admin commands at once").
 */
export const budgetsFor = (deployment: {
  readonly servers: number
  readonly schedulers: number
  readonly processPool: number
  readonly poolerPool: number
  readonly listen: boolean
  readonly own: number
}): Budgets => {
  const listenPerScheduler = deployment.listen ? Database.DIRECT_LISTEN_CONNECTIONS : 0
  // a starting process holds one direct connection while it migrates (only with DATABASE_DIRECT_URL)
  const migrating = deployment.listen ? 1 : 0
  const processes = deployment.servers + deployment.schedulers
  return {
    postgresTotal: deployment.poolerPool + listenPerScheduler * deployment.schedulers + migrating * processes +
      deployment.own,
    pooledBackends: deployment.poolerPool,
    directPerScheduler: listenPerScheduler + migrating,
    directPerServer: migrating,
    poolerServers: deployment.poolerPool,
    poolerClients: deployment.processPool * processes,
    poolerClientsPerProcess: deployment.processPool
  }
}

const num = (value: unknown) => Number(value ?? 0)

/**
 * Samples every connection count until stopped: at PostgreSQL by `application_name` (a `-direct` suffix is a
 * process's direct connection, `storm-sampler` this sampler; every other backend of the application role was opened
 * by the pooler), at the pooler from `SHOW POOLS` and `SHOW CLIENTS`. Each sample is held to `budgets`; an overrun
 * is recorded with the sample's whole count. `watch` names the batch whose progress each sample records.
 */
export const startSampler = async (cluster: Cluster, budgets: Budgets, everyMs: number) => {
  const database = new pg.Client({ connectionString: cluster.superUrl })
  const console = new pg.Client(cluster.consoleConfig)
  await database.connect()
  await console.connect()
  const samples: Array<Sample> = []
  const overruns: Array<string> = []
  const maxima: Counts = {
    postgresTotal: 0,
    pooledBackends: 0,
    directPerScheduler: 0,
    directPerServer: 0,
    poolerServers: 0,
    poolerClients: 0,
    poolerClientsPerProcess: 0
  }
  let watch: string | undefined
  let stopped = false
  let failure: unknown
  const sampleOnce = async () => {
    const at = Date.now()
    const backends = await database.query<{ application_name: string; usename: string | null; n: number }>(
      `SELECT application_name, usename, count(*)::int4 AS n FROM pg_stat_activity
       WHERE backend_type = 'client backend' GROUP BY 1, 2`
    )
    const pools = await console.query<Record<string, unknown>>("SHOW POOLS")
    const clients = await console.query<Record<string, unknown>>("SHOW CLIENTS")
    const progress = watch === undefined ? undefined : await database.query<{ n: number }>(
      `SELECT count(*)::int4 AS n FROM batch_call_tasks WHERE batch_call_id = $1 AND state <> 'pending'`,
      [watch]
    )
    const counts: Counts = {
      postgresTotal: 0,
      pooledBackends: 0,
      directPerScheduler: 0,
      directPerServer: 0,
      poolerServers: 0,
      poolerClients: 0,
      poolerClientsPerProcess: 0
    }
    const direct = new Map<string, number>()
    for (const row of backends.rows) {
      counts.postgresTotal += row.n
      if (row.application_name.endsWith("-direct")) {
        direct.set(row.application_name, (direct.get(row.application_name) ?? 0) + row.n)
      } else if (row.usename === APP_ROLE) {
        counts.pooledBackends += row.n
      }
    }
    for (const [name, n] of direct) {
      if (name.startsWith("storm-scheduler-")) counts.directPerScheduler = Math.max(counts.directPerScheduler, n)
      else counts.directPerServer = Math.max(counts.directPerServer, n)
    }
    for (const row of pools.rows) {
      if (row["database"] !== APP_DATABASE) continue
      counts.poolerServers += num(row["sv_active"]) + num(row["sv_idle"]) + num(row["sv_used"]) +
        num(row["sv_tested"]) + num(row["sv_login"])
      counts.poolerClients += num(row["cl_active"]) + num(row["cl_waiting"]) +
        num(row["cl_active_cancel_req"]) + num(row["cl_waiting_cancel_req"]) + num(row["cl_cancel_req"])
    }
    const perProcess = new Map<string, number>()
    for (const row of clients.rows) {
      if (row["database"] !== APP_DATABASE) continue
      const name = String(row["application_name"] ?? "")
      perProcess.set(name, (perProcess.get(name) ?? 0) + 1)
    }
    counts.poolerClientsPerProcess = Math.max(0, ...perProcess.values())
    const sample: Sample = { at, counts, taken: progress?.rows[0]?.n ?? 0 }
    samples.push(sample)
    for (const key of Object.keys(budgets) as Array<keyof Budgets>) {
      maxima[key] = Math.max(maxima[key], counts[key])
      if (counts[key] > budgets[key]) {
        overruns.push(
          `${key} ${counts[key]} > ${budgets[key]} at ${new Date(at).toISOString()}: ${JSON.stringify(counts)}`
        )
      }
    }
  }
  const loop = (async () => {
    while (!stopped) {
      try {
        await sampleOnce()
      } catch (error) {
        failure = error
        return
      }
      // the sampling period, not a wait for a condition
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    samples,
    overruns,
    maxima,
    watch: (batchCallId: string) => void (watch = batchCallId),
    /** The latest sample's progress of the watched batch. */
    taken: () => samples.at(-1)?.taken ?? 0,
    /** Throws what stopped the sampler, if anything did. */
    check: () => {
      if (failure !== undefined) {
        throw new Error(`the connection sampler failed: ${String(failure)}`, { cause: failure })
      }
    },
    /** Runs a query on the sampler's own connection (between samples' statements; pg queues them). */
    query: <R extends pg.QueryResultRow>(text: string, values?: Array<unknown>) => database.query<R>(text, values),
    stop: async () => {
      stopped = true
      await loop
      await console.end().catch(() => undefined)
      await database.end().catch(() => undefined)
    }
  }
}

export type Sampler = Awaited<ReturnType<typeof startSampler>>
