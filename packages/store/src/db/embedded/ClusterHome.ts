/**
 * Where an embedded cluster lives, and what `<dataDir>/cluster.json` remembers about it.
 *
 * PostgreSQL refuses to run as root, so as root it runs as the system user `svc-postgres`, which
 * must be able to enter the cluster's directory. A checkout under root's home (mode 0700, the usual
 * place on a container or CI runner) or a data dir under `mktemp -d` is not enterable by it, and
 * loosening the user's directories is not ours to do (decision 0008). Then the cluster lives in a
 * directory of its own under `SVC_EMBEDDED_CLUSTERS_DIR` (default `/var/lib/svc/embedded-postgres`),
 * owned by `svc-postgres`, and `cluster.json` in the data dir records where; everything else (the
 * credentials, the client records, the lock) stays in the data dir.
 *
 * `cluster.json` also records the port the server last listened on: a server restarted after a crash
 * must come back on the port every connected process already has in its URL; and the pid namespace of the
 * process that started it, whose pids are the only ones `postmaster.pid` can be read against.
 *
 * Decision record: docs/decisions/0008-embedded-cluster-ownership.md
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/** @category models */
export interface RunAs {
  readonly uid?: number
  readonly gid?: number
}

/** @category models */
export interface Home {
  /** Directory holding `pg/` and `postgres.log`: the data dir itself, or one outside it. */
  readonly dir: string
  readonly pgdata: string
  readonly log: string
  /** True when the cluster lives outside the data dir (recorded in cluster.json). */
  readonly external: boolean
}

interface Pointer {
  readonly home?: string
  readonly port?: number
  /** The pid namespace of the process that last started the server (decision 0016). */
  readonly pidNamespace?: string
}

const pointerFile = (dataDir: string) => path.join(dataDir, "cluster.json")

const readPointer = (dataDir: string): Pointer => {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(pointerFile(dataDir), "utf8"))
    return typeof parsed === "object" && parsed !== null ? parsed as Pointer : {}
  } catch {
    return {}
  }
}

const writePointer = (dataDir: string, pointer: Pointer) => {
  const file = pointerFile(dataDir)
  const temp = `${file}.${process.pid}`
  fs.writeFileSync(temp, JSON.stringify(pointer) + "\n")
  fs.renameSync(temp, file)
}

const homeAt = (dir: string, external: boolean): Home => ({
  dir,
  pgdata: path.join(dir, "pg"),
  log: path.join(dir, "postgres.log"),
  external
})

/** The base of clusters that cannot live in their data dir. */
export const clustersDir = () => process.env["SVC_EMBEDDED_CLUSTERS_DIR"] ?? "/var/lib/svc/embedded-postgres"

/** Whether `as` can enter `dir` (every parent searchable). */
const enterable = (dir: string, as: RunAs) =>
  as.uid === undefined || spawnSync("test", ["-x", dir], { uid: as.uid, gid: as.gid }).status === 0

/** The home recorded for this data dir, or the data dir itself; never creates anything. */
export const current = (dataDir: string): Home => {
  const pointer = readPointer(dataDir)
  return pointer.home !== undefined ? homeAt(pointer.home, true) : homeAt(dataDir, false)
}

/**
 * The home for this data dir, created outside it when the identity that runs PostgreSQL cannot
 * enter it. A cluster that already exists in the data dir stays there.
 */
export const resolve = (dataDir: string, as: RunAs): Home => {
  const pointer = readPointer(dataDir)
  if (pointer.home !== undefined) {
    if (!fs.existsSync(pointer.home)) createHome(pointer.home, as)
    return homeAt(pointer.home, true)
  }
  if (as.uid === undefined || fs.existsSync(path.join(dataDir, "pg", "PG_VERSION")) || enterable(dataDir, as)) {
    return homeAt(dataDir, false)
  }
  const base = clustersDir()
  fs.mkdirSync(base, { recursive: true, mode: 0o755 })
  // A name of our own, never reused: a data dir deleted and made again at the same path must not
  // meet the old cluster, whose credentials went with the old data dir.
  const dir = fs.mkdtempSync(path.join(base, `${path.basename(dataDir).replace(/[^\w.-]/g, "_") || "svc"}-`))
  createHome(dir, as)
  writePointer(dataDir, { ...pointer, home: dir })
  return homeAt(dir, true)
}

const createHome = (dir: string, as: RunAs) => {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.chmodSync(dir, 0o700)
  if (as.uid !== undefined && as.gid !== undefined) fs.chownSync(dir, as.uid, as.gid)
}

/** The port recorded by the last start, if any. */
export const recordedPort = (dataDir: string): number | undefined => readPointer(dataDir).port

/** Records the port the server listens on. */
export const recordPort = (dataDir: string, port: number): void => {
  const pointer = readPointer(dataDir)
  if (pointer.port !== port) writePointer(dataDir, { ...pointer, port })
}

/** Records the port of a server this process has just started, and this process's pid namespace. */
export const recordStart = (dataDir: string, port: number, pidNamespace: string | undefined): void => {
  const pointer = readPointer(dataDir)
  if (pointer.port !== port || pointer.pidNamespace !== pidNamespace) {
    const { pidNamespace: _, ...rest } = pointer
    writePointer(dataDir, { ...rest, port, ...(pidNamespace === undefined ? {} : { pidNamespace }) })
  }
}

/** The pid namespace of the process that last started the server, when recorded. */
export const starterNamespace = (dataDir: string): string | undefined => readPointer(dataDir).pidNamespace
