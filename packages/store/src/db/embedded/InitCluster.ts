/**
 * Creating an embedded cluster: the data dir must be writable, the credentials are made once and kept in
 * `<dataDir>/credentials.json`, initdb runs as the identity that runs PostgreSQL, and our settings are
 * appended to `postgresql.conf` (decision 0004).
 */
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { type Binaries, PG_USER, type RunAs } from "./Binaries.ts"
import type * as ClusterHome from "./ClusterHome.ts"
import { runSync } from "./PgTool.ts"

const DB_USER = "svc"

export interface Credentials {
  readonly user: string
  readonly password: string
}

export const credentials = (dataDir: string): Credentials => {
  const file = path.join(dataDir, "credentials.json")
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Credentials
  } catch {
    const created = { user: DB_USER, password: crypto.randomBytes(24).toString("base64url") }
    fs.writeFileSync(file, JSON.stringify(created), { mode: 0o600 })
    return created
  }
}

export const ensureWritable = (dataDir: string) => {
  try {
    fs.mkdirSync(dataDir, { recursive: true })
    const probe = path.join(dataDir, `.write-probe-${process.pid}`)
    fs.writeFileSync(probe, "")
    fs.rmSync(probe)
  } catch (error) {
    throw new Error(`SVC_DATA_DIR ${dataDir} is not writable (${(error as NodeJS.ErrnoException).code ?? error})`, {
      cause: error
    })
  }
}

/** initdb into `home.pgdata` (emptied first), then our settings, `settings` last so they win. */
export const initCluster = (
  bin: Binaries,
  home: ClusterHome.Home,
  as: RunAs,
  creds: Credentials,
  settings: Readonly<Record<string, string>> | undefined
) => {
  fs.rmSync(home.pgdata, { recursive: true, force: true })
  fs.mkdirSync(home.pgdata, { mode: 0o700 })
  // Beside the cluster, not in the data dir: the user running PostgreSQL may not reach the data dir.
  const pwfile = path.join(home.dir, `.pwfile-${process.pid}`)
  fs.writeFileSync(pwfile, creds.password + "\n", { mode: 0o600 })
  try {
    if (as.uid !== undefined && as.gid !== undefined) {
      fs.chownSync(home.pgdata, as.uid, as.gid)
      fs.chownSync(pwfile, as.uid, as.gid)
      const reach = spawnSync("test", ["-w", home.pgdata], { ...as })
      if (reach.status !== 0) {
        throw new Error(
          `the cluster directory ${home.pgdata} is not reachable by the user ${PG_USER} that runs PostgreSQL (this ` +
            `process is root and PostgreSQL refuses root); set SVC_DATA_DIR elsewhere, or set DATABASE_URL`
        )
      }
    }
    runSync("initdb", bin.initdb, [
      `--pgdata=${home.pgdata}`,
      `--username=${creds.user}`,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      "--locale-provider=builtin",
      "--builtin-locale=C.UTF-8",
      "--no-instructions"
    ], as)
  } finally {
    fs.rmSync(pwfile, { force: true })
  }
  const all: Record<string, string> = {
    listen_addresses: "'127.0.0.1'",
    // TCP only: a Unix socket path under a deep repository folder can exceed the 107-byte limit.
    unix_socket_directories: "''",
    max_connections: "200",
    shared_buffers: "256MB",
    ...settings
  }
  fs.appendFileSync(
    path.join(home.pgdata, "postgresql.conf"),
    "\n# svc embedded defaults\n" + Object.entries(all).map(([k, v]) => `${k} = ${v}`).join("\n") + "\n"
  )
}

/** The connection URL of `database` on the server at `port`. */
export const urlFor = (creds: Credentials, port: number, database: string) =>
  `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${database}`
