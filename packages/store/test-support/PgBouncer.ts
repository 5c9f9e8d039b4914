/**
 * A real PgBouncer (Debian's `pgbouncer` package, 1.18 on Debian 12) in `pool_mode = transaction` in front of a
 * PostgreSQL server, for the integration suite's pooler run (decision 0440) and for tests of what a transaction
 * pooler breaks. Started like the Redis of the rate-limit tests: a child process on a free port, its files in a
 * temporary directory, stopped with SIGTERM (PgBouncer 1.18: immediate shutdown).
 *
 * Every database of the server is reachable through it by name (`* = host=… port=…`, PgBouncer's "fallback database"),
 * with the server's own user and password (kept in the pooler's `auth_file`, which PgBouncer also uses to log in to
 * the server).
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

/** Where the binary is: `SVC_PGBOUNCER`, else Debian's path, else `pgbouncer` on the PATH; `undefined` if none. */
export const binary = (): string | undefined => {
  const configured = process.env["SVC_PGBOUNCER"]
  if (configured !== undefined && configured !== "") return configured
  if (fs.existsSync("/usr/sbin/pgbouncer")) return "/usr/sbin/pgbouncer"
  const found = spawnSync("sh", ["-c", "command -v pgbouncer"], { encoding: "utf8" })
  const line = found.stdout.trim()
  return found.status === 0 && line !== "" ? line : undefined
}

export interface PgBouncer {
  /** `serverUrl` with the pooler's host and port: the same user, password and database. */
  readonly url: string
  readonly port: number
  readonly stop: () => Promise<void>
}

export interface PgBouncerOptions {
  /** Server connections per (database, user): PgBouncer's `default_pool_size`. Default 20. */
  readonly poolSize?: number
  /** Client connections the pooler accepts: `max_client_conn`. Default 1000. */
  readonly maxClientConnections?: number
  /**
   * Users allowed the admin console's read-only `SHOW` commands (`stats_users`: the `pgbouncer` database, simple
   * query protocol only), e.g. a test that samples `SHOW POOLS`; they log in with the auth_file password as usual.
   * Default: none.
   */
  readonly statsUsers?: ReadonlyArray<string>
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
    server.once("error", reject)
  })

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** A quoted `auth_file` field (PgBouncer doubles a `"` inside one). */
const quoted = (value: string) => `"${value.replaceAll("\"", "\"\"")}"`

/**
 * Starts PgBouncer in transaction mode in front of the server of `serverUrl` (a `postgres://user:password@host:port/db`
 * URL). Fails when the binary is missing or the pooler does not accept connections within 20 s.
 */
export const start = async (serverUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> => {
  const bin = binary()
  if (bin === undefined) {
    throw new Error(
      "pgbouncer not found: install Debian's pgbouncer package (README, Requirements) or set SVC_PGBOUNCER"
    )
  }
  const server = new URL(serverUrl)
  const user = decodeURIComponent(server.username)
  const password = decodeURIComponent(server.password)
  const port = await freePort()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-pgbouncer-"))
  fs.writeFileSync(path.join(dir, "userlist.txt"), `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 })
  const ini = [
    "[databases]",
    `* = host=${server.hostname} port=${server.port || "5432"}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    // TCP only, as the embedded server: a socket path under a deep temporary directory can exceed 107 bytes
    "unix_socket_dir =",
    "pool_mode = transaction",
    // the client authenticates with SCRAM as against the server; the plain password in auth_file lets PgBouncer
    // log in to the server with it
    "auth_type = scram-sha-256",
    `auth_file = ${path.join(dir, "userlist.txt")}`,
    `default_pool_size = ${options.poolSize ?? 20}`,
    `max_client_conn = ${options.maxClientConnections ?? 1000}`,
    ...(options.statsUsers === undefined || options.statsUsers.length === 0
      ? []
      : [`stats_users = ${options.statsUsers.join(", ")}`]),
    // what a client's parameter does not carry over between transactions: the pooler's own defaults
    "ignore_startup_parameters = extra_float_digits",
    `logfile = ${path.join(dir, "pgbouncer.log")}`,
    // a test database is dropped WITH (FORCE) while the pooler may hold server connections to it; those fail and are
    // replaced, so a short check keeps a dead one from being handed out
    "server_check_delay = 0",
    ""
  ].join("\n")
  fs.writeFileSync(path.join(dir, "pgbouncer.ini"), ini)
  // PgBouncer refuses to run as root; `-u` drops to the packaged `postgres` user, which must read its files
  const args: Array<string> = []
  if (process.getuid?.() === 0) {
    const owner = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" })
    const group = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" })
    if (owner.status === 0 && group.status === 0) {
      const uid = Number(owner.stdout.trim())
      const gid = Number(group.stdout.trim())
      for (const file of ["", "userlist.txt", "pgbouncer.ini"]) fs.chownSync(path.join(dir, file), uid, gid)
      args.push("-u", "postgres")
    } else {
      args.push("-u", "nobody")
      fs.chmodSync(dir, 0o755)
      fs.chmodSync(path.join(dir, "userlist.txt"), 0o644)
    }
  }
  args.push(path.join(dir, "pgbouncer.ini"))
  const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  child.stderr?.on("data", (chunk) => stderr += chunk)
  let exited: number | null | undefined
  child.once("exit", (code) => exited = code)
  const logTail = () => {
    try {
      return fs.readFileSync(path.join(dir, "pgbouncer.log"), "utf8").trim().split("\n").slice(-5).join(" | ")
    } catch {
      return ""
    }
  }
  const deadline = Date.now() + 20_000
  while (!(await accepts(port))) {
    if (exited !== undefined) throw new Error(`pgbouncer exited ${exited}: ${stderr.trim()} ${logTail()}`)
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`pgbouncer did not accept connections on ${port} within 20 s: ${stderr.trim()} ${logTail()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const url = new URL(serverUrl)
  url.hostname = "127.0.0.1"
  url.port = String(port)
  return {
    url: url.toString(),
    port,
    stop: async () => {
      if (exited === undefined) {
        const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()))
        child.kill("SIGTERM")
        const killed = setTimeout(() => child.kill("SIGKILL"), 5_000)
        await gone
        clearTimeout(killed)
      }
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}
