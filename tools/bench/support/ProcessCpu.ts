// CPU time of processes from /proc (Linux), for benchmarks that report CPU per task or request beside wall time: on
// this shared 2-core machine, CPU per unit of work varies far less with other engineers' load than wall time does.
import * as fs from "node:fs"
import * as path from "node:path"

/** Linux reports CPU time in clock ticks of 10 ms (USER_HZ = 100). */
const TICK_MS = 10

interface Stat {
  readonly pid: number
  readonly parent: number
  /** utime + stime, ms. */
  readonly cpuMs: number
  /** cutime + cstime, ms: the CPU of the children this process has waited for (reaped). */
  readonly reapedMs: number
}

/** A process's parent and CPU time so far, from /proc/PID/stat; undefined once it has ended. */
export const procStat = (pid: number): Stat | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // after "pid (comm) ": state, ppid, ..., utime (14th field of the file), stime, cutime, cstime
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return {
      pid,
      parent: Number(fields[1]),
      cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS,
      reapedMs: (Number(fields[13]) + Number(fields[14])) * TICK_MS
    }
  } catch {
    return undefined
  }
}

/** CPU time (ms) a process has used so far; 0 once it has ended. */
export const processCpuMs = (pid: number | undefined): number =>
  (pid === undefined ? undefined : procStat(pid))?.cpuMs ?? 0

/**
 * CPU time (ms) used so far by an embedded PostgreSQL (its data directory `dataDir`, as BenchSupport's
 * `benchDatabase` lays it out): the postmaster, its live children (backends, autovacuum, checkpointer, WAL writer)
 * and, through the postmaster's cutime/cstime, the children that have ended: a backend whose connection closed
 * during a measurement keeps its CPU in the sum instead of taking it away. 0 when the server is not ours to see.
 */
export const postgresCpuMs = (dataDir: string | undefined): number => {
  if (dataDir === undefined) return 0
  let postmaster: number
  try {
    postmaster = Number(fs.readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])
  } catch {
    return 0
  }
  let total = 0
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const stat = procStat(Number(entry))
    if (stat === undefined) continue
    if (stat.pid === postmaster) total += stat.cpuMs + stat.reapedMs
    else if (stat.parent === postmaster) total += stat.cpuMs
  }
  return total
}

/** The whole machine's CPU time (ms, summed over cores) so far, busy and in total, from /proc/stat. */
export const machineCpuMs = (): { readonly busy: number; readonly total: number } => {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest time is already in user)
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number)
  const total = ticks.reduce((a, b) => a + b, 0)
  const idle = ticks[3]! + ticks[4]!
  return { busy: (total - idle) * TICK_MS, total: total * TICK_MS }
}

/** What a PostgreSQL process does, from the title it sets (`postgres: autovacuum worker svc`, `postgres: svc svc ...`). */
export type PostgresKind = "backend" | "autovacuum" | "background"

const kindOf = (pid: number): PostgresKind | undefined => {
  let title: string
  try {
    title = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
  } catch {
    return undefined
  }
  if (title.includes("autovacuum worker")) return "autovacuum"
  // the checkpointer, background writer, WAL writer, I/O workers, launchers: everything that serves no client
  if (
    /postgres: (checkpointer|background writer|walwriter|io worker|autovacuum launcher|logical replication)/.test(title)
  ) {
    return "background"
  }
  return "backend"
}

/**
 * PostgreSQL's CPU over an interval split by kind of process: client backends (the statements of svc and of the
 * bench), autovacuum workers (whose work lands in whichever measurement it happens to overlap), and the background
 * processes. Samples /proc every `everyMs` while running, because an autovacuum worker (or a backend whose connection
 * closes) ends during the interval and its CPU then only reaches the postmaster's total, with no kind; what ended
 * between two samples is counted in `total` (exact, from `postgresCpuMs`) but in no kind, so the kinds may sum to a
 * little less than the total.
 */
export const startPostgresSampler = (dataDir: string | undefined, everyMs = 200) => {
  const startTotal = postgresCpuMs(dataDir)
  /** Per pid: its kind, its CPU when first seen (0 for a process started after the sampler), its CPU last seen. */
  const seen = new Map<number, { kind: PostgresKind; first: number; last: number }>()
  let firstSample = true
  const sample = () => {
    if (dataDir === undefined) return
    let postmaster: number
    try {
      postmaster = Number(fs.readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])
    } catch {
      return
    }
    for (const entry of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue
      const stat = procStat(Number(entry))
      if (stat === undefined || stat.parent !== postmaster) continue
      const known = seen.get(stat.pid)
      if (known !== undefined) {
        seen.set(stat.pid, { ...known, last: stat.cpuMs })
        continue
      }
      const kind = kindOf(stat.pid)
      if (kind !== undefined) seen.set(stat.pid, { kind, first: firstSample ? stat.cpuMs : 0, last: stat.cpuMs })
    }
    firstSample = false
  }
  sample()
  const timer = setInterval(sample, everyMs)
  return {
    /** Stops sampling; PostgreSQL's CPU (ms) since the start, in total and by kind. */
    stop: () => {
      clearInterval(timer)
      sample()
      const byKind: Record<PostgresKind, number> = { backend: 0, autovacuum: 0, background: 0 }
      for (const { first, kind, last } of seen.values()) byKind[kind] += last - first
      return { total: postgresCpuMs(dataDir) - startTotal, ...byKind }
    }
  }
}
