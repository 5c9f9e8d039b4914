// What the benchmarks share: command-line numbers, medians, and the database they run on.
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { Effect, Exit, Redacted, Scope } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** `--name=N` from the command line: a positive integer, else `fallback`. */
export const argument = (name: string, fallback: number): number => {
  const raw = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1]
  const value = raw === undefined ? Number.NaN : Number(raw)
  return Number.isInteger(value) && value > 0 ? value : fallback
}

/** The short hash of the checkout's HEAD, which a report names as the code measured; "unknown" outside git. */
export const gitCommit = (): string => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
}

/**
 * postgresql.conf settings of the benches over a large history (list-calls, partitions): the working set in
 * shared buffers, no checkpoint or JIT in the middle of a measurement.
 */
export const HISTORY_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: "1GB",
  effective_cache_size: "8GB",
  work_mem: "64MB",
  maintenance_work_mem: "1GB",
  max_wal_size: "16GB",
  checkpoint_timeout: "30min",
  random_page_cost: "1.1",
  jit: "off"
}

/** The median; the mean of the two middle values for an even count. */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export interface BenchDatabase {
  readonly url: Redacted.Redacted<string>
  /** The embedded server's data directory; undefined on DATABASE_URL. */
  readonly dataDir: string | undefined
  /** Stops the embedded server and removes its directory (nothing on DATABASE_URL). */
  readonly close: () => Promise<void>
}

/**
 * DATABASE_URL when set, else an embedded PostgreSQL of the bench's own in a temporary directory named after
 * `name`, with `settings` added to its postgresql.conf (a profile's pg_stat_statements, for one).
 */
export const benchDatabase = async (
  name: string,
  options: { readonly settings?: Readonly<Record<string, string>> } = {}
): Promise<BenchDatabase> => {
  const external = process.env["DATABASE_URL"]
  if (external) return { url: Redacted.make(external), dataDir: undefined, close: async () => {} }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-bench-${name}-`))
  fs.chmodSync(dataDir, 0o755)
  const scope = Scope.makeUnsafe()
  const server = await Effect.runPromise(
    Scope.provide(
      EmbeddedPostgres.start({ dataDir, ...(options.settings === undefined ? {} : { settings: options.settings }) }),
      scope
    )
  )
  return {
    url: server.url,
    dataDir,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
