// svc-scheduler and svc-server processes for benchmarks, spawned as tools/bench/scheduler.bench.ts (`startWorker`)
// and tools/bench/http.bench.ts (`startProcess`) spawn them, plus stopping, pausing and resuming a set of them.
import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"
import type pg from "pg"

const root = path.resolve(import.meta.dirname, "..", "..", "..")

// Every process spawned here is killed when the bench ends, however it ends: a paused (stopped) one would otherwise
// stay behind forever, holding its connections.
const spawned = new Set<ChildProcess>()
/** SIGKILL to every process spawned here that is still running (paused ones too). */
export const killSpawned = () => {
  for (const child of spawned) child.kill("SIGKILL")
}
process.once("exit", killSpawned)
const track = (child: ChildProcess) => {
  spawned.add(child)
  child.once("exit", () => spawned.delete(child))
  return child
}

/** `url` with an `application_name` (@effect/sql-pg passes the URL's query on), to find a process's backends. */
export const withApplicationName = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.searchParams.set("application_name", name)
  return parsed.toString()
}

/** A port nobody listens on now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
    server.once("error", reject)
  })

/**
 * An `svc-scheduler` on `url` as scheduler.bench.ts runs its workers: the simulated dialer in memory with zero
 * latency, the backfill cron off, its own SCHEDULER_WORKER_ID, 6 pooled connections. Resolves once it logged
 * `svc-scheduler started`; its output is read (and dropped) all along, so a full pipe never blocks it.
 */
export const startWorker = (url: string, workerId: string) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = track(spawn(process.execPath, [path.join(root, "apps/scheduler/src/main.ts")], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: url,
        LOG_LEVEL: "Info",
        SVC_DB_MAX_CONNECTIONS: "6",
        SCHEDULER_WORKER_ID: workerId,
        SCHEDULER_BACKFILL_CRON: "off",
        SIMULATED_DIALER_STORE: "memory",
        SIMULATED_DIALER_LATENCY_MS: "0"
      },
      stdio: ["ignore", "pipe", "pipe"]
    }))
    let output = ""
    let started = false
    const keep = (chunk: Buffer) => {
      if (started) return
      output = (output + chunk.toString()).slice(-20_000)
      if (output.includes("svc-scheduler started")) {
        started = true
        resolve(child)
      }
    }
    child.stdout!.on("data", keep)
    child.stderr!.on("data", keep)
    child.once("exit", (code) => reject(new Error(`worker ${workerId} exited (${code}): ${output.slice(-2000)}`)))
  })

/**
 * An `svc-server` on `url` listening on `port`, as http.bench.ts runs it (log level Warn, a rate limit no bench
 * reaches). Resolves once `GET /readyz` answers 200 (PostgreSQL answers it a query).
 */
export const startServer = async (url: string, port: number): Promise<ChildProcess> => {
  const child = track(spawn(process.execPath, [path.join(root, "apps/server/src/main.ts")], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), LOG_LEVEL: "Warn", SVC_RATE_LIMIT: "100000000" },
    stdio: ["ignore", "ignore", "inherit"]
  }))
  let exited: number | null | undefined
  child.once("exit", (code) => (exited = code))
  const deadline = Date.now() + 120_000
  for (;;) {
    if (exited !== undefined) throw new Error(`svc-server on port ${port} exited ${exited}`)
    if (Date.now() > deadline) throw new Error(`svc-server on port ${port} not ready within 120 s`)
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`)
      if (response.status === 200) return child
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** SIGTERM to each, resolving when all have exited (a paused one is resumed first: a stopped process ends late). */
export const stopProcesses = (children: ReadonlyArray<ChildProcess>) =>
  Promise.all(children.map((child) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.removeAllListeners("exit")
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
      child.kill("SIGCONT")
    })
  ))

/**
 * SIGSTOP to each: a stopped process uses no CPU and runs no timer, and keeps its connections, warm code and
 * caches for when it is resumed. Pause only a process with no work in hand (for a worker: no task leased).
 */
export const pauseProcesses = (children: ReadonlyArray<ChildProcess>) => {
  for (const child of children) child.kill("SIGSTOP")
}

/**
 * Pauses `children` at a moment none of them is inside a statement or a transaction: stopped there, a process would
 * keep its locks (a periodic job's advisory lock, a row it updates) and stall the processes that run meanwhile. Their
 * backends are found by application name (`names`, see `withApplicationName`) in `pg_stat_activity` through
 * `monitor`; while any is not idle, they are resumed for 50 ms and paused again. Checked twice 100 ms apart: a
 * statement sent just before the stop may not have reached its backend at the first look.
 */
export const pauseWhenIdle = async (
  monitor: pg.Client,
  children: ReadonlyArray<ChildProcess>,
  names: ReadonlyArray<string>
) => {
  const busy = async () => {
    const { rows } = await monitor.query<{ n: number }>(
      "SELECT count(*)::int4 AS n FROM pg_stat_activity WHERE application_name = ANY($1) AND state <> 'idle'",
      [names]
    )
    return rows[0]!.n
  }
  for (let attempt = 0;; attempt++) {
    pauseProcesses(children)
    let n = await busy()
    if (n === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      n = await busy()
      if (n === 0) return
    }
    if (attempt >= 100) throw new Error(`${names.join(", ")}: ${n} backends still busy after ${attempt} tries`)
    resumeProcesses(children)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** SIGCONT to each. */
export const resumeProcesses = (children: ReadonlyArray<ChildProcess>) => {
  for (const child of children) child.kill("SIGCONT")
}
