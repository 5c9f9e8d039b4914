// `npm start` as an operator meets it: the bootstrap runs the all-in-one process, which answers
// /healthz and /readyz, shuts down on SIGINT/SIGTERM leaving no postgres behind, keeps its data
// across restarts, and refuses bad configuration with one line and a non-zero exit.
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@svc/store"
import { Effect, Layer } from "effect"
import { Reactivity } from "effect/reactivity"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

interface Started {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

const startSvc = (env: Record<string, string>): Started => {
  let output = ""
  const child = spawn(process.execPath, [path.join(root, "tools/bootstrap/bootstrap.cjs"), "start:svc"], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "Info", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout?.on("data", (chunk) => (output += chunk))
  child.stderr?.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

const waitFor = async (url: string, deadlineMs = 60_000) => {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    try {
      const response = await fetch(url)
      return { status: response.status, body: await response.text() }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not answer within ${deadlineMs} ms`)
}

const postgresFor = (dataDir: string) => {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])
    return /^\d+ \(.*\) [^Z]/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8")) ? pid : undefined
  } catch {
    return undefined
  }
}

/** Runs SQL on the running embedded server as a guest, as an admin command would. */
const sqlOn = <A>(dataDir: string, query: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const server = yield* EmbeddedPostgres.start({ dataDir })
      assert.isFalse(server.started, "the test joins the server that npm start runs")
      const client = yield* PgClient.makeClient({ url: server.url })
      return yield* query(client)
    })).pipe(Effect.provide(Layer.mergeAll(Reactivity.layer)))
  )

const tempDataDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-start-"))
  fs.chmodSync(dir, 0o755)
  return dir
}

describe("npm start", () => {
  it("serves health and readiness, stops cleanly on SIGINT and SIGTERM, and keeps its data", async () => {
    const dataDir = tempDataDir()
    try {
      const port = await freePort()
      const first = startSvc({ PORT: String(port), SVC_DATA_DIR: dataDir })
      assert.deepStrictEqual(await waitFor(`http://127.0.0.1:${port}/healthz`), {
        status: 200,
        body: "{\"status\":\"ok\"}"
      })
      assert.deepStrictEqual(await waitFor(`http://127.0.0.1:${port}/readyz`), {
        status: 200,
        body: "{\"status\":\"ok\"}"
      })
      assert.match(first.output(), /svc-server listening on http:\/\/localhost:\d+/)
      await sqlOn(
        dataDir,
        (sql) => Effect.andThen(sql`CREATE TABLE kept (note text)`, sql`INSERT INTO kept VALUES ('still here')`)
      )
      const pg = postgresFor(dataDir)
      assert.isDefined(pg)
      first.child.kill("SIGINT")
      // 130 = 128 + SIGINT: the shell convention for "stopped by Ctrl-C", after a graceful shutdown.
      assert.strictEqual(await first.exited, 130)
      assert.include(first.output(), "svc-scheduler stopped")
      assert.isUndefined(postgresFor(dataDir), "no postgres process is left behind")

      const second = startSvc({ PORT: String(port), SVC_DATA_DIR: dataDir })
      assert.strictEqual((await waitFor(`http://127.0.0.1:${port}/readyz`)).status, 200)
      const rows = await sqlOn(dataDir, (sql) => sql<{ note: string }>`SELECT note FROM kept`)
      assert.deepStrictEqual(rows.map((r) => r.note), ["still here"])
      second.child.kill("SIGTERM")
      assert.strictEqual(await second.exited, 0, "SIGTERM is the graceful stop an orchestrator asks for")
      assert.include(second.output(), "svc-scheduler stopped")
      assert.isUndefined(postgresFor(dataDir))
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)

  it("refuses a PORT that is taken with one line and exit code 1", async () => {
    const dataDir = tempDataDir()
    const blocker = net.createServer()
    try {
      const port = await freePort()
      await new Promise<void>((resolve) => blocker.listen(port, "0.0.0.0", resolve))
      const svc = startSvc({ PORT: String(port), SVC_DATA_DIR: dataDir })
      assert.strictEqual(await svc.exited, 1)
      assert.include(svc.output(), `svc: PORT ${port} is already in use (set PORT to a free port)\n`)
      assert.notMatch(svc.output(), /\n\s+at /, "no stack trace")
      assert.isUndefined(postgresFor(dataDir), "the embedded server started for it is stopped again")
    } finally {
      blocker.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)

  it("refuses an unreachable DATABASE_URL with one line and exit code 1", async () => {
    const port = await freePort()
    const svc = startSvc({
      PORT: String(port),
      DATABASE_URL: `postgres://svc:secret@127.0.0.1:${await freePort()}/svc`
    })
    assert.strictEqual(await svc.exited, 1)
    assert.match(svc.output(), /^svc: cannot reach the database at 127\.0\.0\.1:\d+\/svc: .+$/m)
    assert.notInclude(svc.output(), "secret")
  }, 60_000)

  it("refuses an unwritable SVC_DATA_DIR with one line and exit code 1", async () => {
    const dir = tempDataDir()
    try {
      fs.writeFileSync(path.join(dir, "file"), "")
      const svc = startSvc({ PORT: String(await freePort()), SVC_DATA_DIR: path.join(dir, "file", "data") })
      assert.strictEqual(await svc.exited, 1)
      assert.match(svc.output(), /^svc: embedded PostgreSQL: SVC_DATA_DIR .*\/file\/data is not writable \(ENOTDIR\)$/m)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
