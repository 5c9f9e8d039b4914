// The embedded server is shared by every process on its data dir and stopped by the last one to
// leave, whoever started it (issue 16: an admin command that started it must not stop it under a
// running server); a postmaster that dies is restarted by a supervising client on its port.
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as EmbeddedPostgres from "../../src/db/EmbeddedPostgres.ts"

const isRoot = process.getuid?.() === 0

/** A data dir others may enter, as the existing fixtures use; `private` keeps mkdtemp's 0700. */
const tempDir = (mode: "shared" | "private" = "shared") =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-embedded-"))
      if (mode === "shared") fs.chmodSync(dir, 0o755)
      return dir
    }),
    (dir) =>
      Effect.sync(() => {
        const external = EmbeddedPostgres.layout(dir).externalHome
        if (external !== undefined) fs.rmSync(external, { recursive: true, force: true })
        fs.rmSync(dir, { recursive: true, force: true })
      })
  )

const postmasterPid = (dataDir: string) => {
  try {
    return Number(
      fs.readFileSync(path.join(EmbeddedPostgres.layout(dataDir).pgdata, "postmaster.pid"), "utf8").split("\n")[0]
    )
  } catch {
    return undefined
  }
}

/** Running, and not a zombie (a container's init may be slow to reap the exited postmaster). */
const alive = (pid: number | undefined) => {
  if (pid === undefined) return false
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

const startIn = (dataDir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    // Also closed with the test's scope, so a failed assertion leaves no server running.
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const server = yield* Scope.provide(EmbeddedPostgres.start({ dataDir }), scope)
    return { server, scope, close: Scope.close(scope, Exit.void) }
  })

/** `SELECT 1` through a fresh connection: the server answers. */
const answers = (server: EmbeddedPostgres.Server) =>
  Effect.scoped(Effect.gen(function*() {
    const client = yield* PgClient.makeClient({ url: server.url })
    const rows = yield* client<{ one: number }>`SELECT 1 AS one`
    return rows[0]?.one === 1
  })).pipe(Effect.provide(Reactivity.layer), Effect.timeout("5 seconds"), Effect.orElseSucceed(() => false))

interface Holder {
  readonly child: ChildProcess
  readonly port: number
  readonly started: boolean
  readonly exited: Promise<number | null>
}

/** Another process that starts or joins the server and holds it (fixtures/holdEmbedded.ts). */
const holder = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const child = spawn(process.execPath, [path.join(import.meta.dirname, "fixtures", "holdEmbedded.ts"), dataDir], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      return new Promise<Holder>((resolve, reject) => {
        child.stdout.once("data", (chunk) => {
          const [port, started] = String(chunk).trim().split(" ")
          resolve({ child, port: Number(port), started: started === "true", exited })
        })
        void exited.then((code) => reject(new Error(`holder exited ${code}`)))
      })
    }),
    (held) => Effect.sync(() => held.child.kill("SIGKILL"))
  )

describe("EmbeddedPostgres", () => {
  it.live(
    "clients in one process: the server runs until the last scope closes",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir()
        const first = yield* startIn(dataDir)
        assert.isTrue(first.server.started)
        const second = yield* startIn(dataDir)
        assert.isFalse(second.server.started)
        assert.strictEqual(second.server.port, first.server.port)
        const pid = postmasterPid(dataDir)
        yield* first.close
        assert.isTrue(alive(pid), "the starter leaving must not stop the server the other scope uses")
        assert.isTrue(yield* answers(second.server))
        yield* second.close
        assert.isFalse(alive(pid), "the last client stops the server")
        assert.isUndefined(postmasterPid(dataDir))
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "the process that started the server exits while another process uses it: the server stays up for that one",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir()
        // This process plays the admin command that starts the server; the holder plays npm start.
        const starter = yield* startIn(dataDir)
        assert.isTrue(starter.server.started)
        const server = yield* holder(dataDir)
        assert.isFalse(server.started)
        const pid = postmasterPid(dataDir)
        yield* starter.close
        assert.isTrue(alive(pid), "the admin command's exit left the server running for npm start")
        const rejoined = yield* startIn(dataDir)
        assert.isTrue(yield* answers(rejoined.server))
        yield* rejoined.close
        assert.isTrue(alive(pid))
        // The holder leaves gracefully: it was the last client, so it stops the server.
        server.child.kill("SIGTERM")
        assert.strictEqual(yield* Effect.promise(() => server.exited), 0)
        assert.isFalse(alive(pid), "the last client to leave stopped the server")
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "the process that started the server is SIGKILLed while another uses it: it keeps running; the last client stops it",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir()
        const starter = yield* holder(dataDir)
        assert.isTrue(starter.started)
        const user = yield* startIn(dataDir)
        assert.isFalse(user.server.started)
        const pid = postmasterPid(dataDir)
        starter.child.kill("SIGKILL")
        yield* Effect.promise(() => starter.exited)
        assert.isTrue(alive(pid), "a SIGKILLed client cannot stop the server, and must not")
        assert.isTrue(yield* answers(user.server), "the other client's work goes on")
        yield* user.close
        assert.isFalse(alive(pid), "the dead client's record does not count: the last live client stopped it")
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "a server whose only client was SIGKILLed is joined by the next start, stopped by it, and keeps its data",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir()
        const starter = yield* holder(dataDir)
        const pid = postmasterPid(dataDir)
        starter.child.kill("SIGKILL")
        yield* Effect.promise(() => starter.exited)
        assert.isTrue(alive(pid), "this is the orphan the next start finds")
        const next = yield* startIn(dataDir)
        assert.isFalse(next.server.started)
        assert.strictEqual(next.server.port, starter.port)
        yield* next.close
        assert.isFalse(alive(pid), "the orphan's last live client stopped it")
        const again = yield* startIn(dataDir)
        assert.isTrue(again.server.started)
        assert.strictEqual(again.server.port, starter.port, "a restart takes the port it had when that is free")
        assert.isTrue(fs.existsSync(path.join(EmbeddedPostgres.layout(dataDir).pgdata, "PG_VERSION")))
        yield* again.close
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "supervise restarts a postmaster killed with SIGKILL on the same port, and connections heal",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir()
        const { server } = yield* startIn(dataDir)
        const watcher = yield* Effect.forkScoped(
          EmbeddedPostgres.supervise(server, { interval: Duration.millis(100), backoff: Duration.millis(200) })
        )
        const before = postmasterPid(dataDir)
        process.kill(before!, "SIGKILL")
        let healed = false
        for (let i = 0; i < 300 && !healed; i++) {
          yield* Effect.sleep(Duration.millis(100))
          healed = alive(postmasterPid(dataDir)) && postmasterPid(dataDir) !== before && (yield* answers(server))
        }
        assert.isTrue(healed, "a new postmaster answers on the port every client's URL names")
        assert.isUndefined(watcher.pollUnsafe(), "the supervisor keeps watching")
        yield* Fiber.interrupt(watcher)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "supervise gives up after its bounded attempts when the server cannot come back, saying why",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir()
        const { server } = yield* startIn(dataDir)
        const pid = postmasterPid(dataDir)!
        process.kill(pid, "SIGKILL")
        for (let waited = 0; alive(pid); waited += 20) {
          assert.isBelow(waited, 30_000, `the postmaster (pid ${pid}) still alive 30 s after SIGKILL`)
          yield* Effect.sleep(Duration.millis(20))
        }
        // Someone else takes the port: the server may not move (clients hold its URL), so it cannot restart.
        const squatter = net.createServer()
        yield* Effect.acquireRelease(
          Effect.promise(() =>
            new Promise<void>((resolve, reject) => {
              squatter.once("error", reject)
              squatter.listen(server.port, "127.0.0.1", () => resolve())
            })
          ),
          () => Effect.sync(() => squatter.close())
        )
        const error = yield* Effect.flip(
          EmbeddedPostgres.supervise(server, {
            interval: Duration.millis(50),
            backoff: Duration.millis(10),
            maxAttempts: 2
          })
        )
        assert.strictEqual(error._tag, "EmbeddedPostgresError")
        assert.match(
          error.message,
          /^embedded PostgreSQL stopped and did not restart after 2 attempts: pg_ctl start failed/
        )
        assert.include(error.message, EmbeddedPostgres.layout(dataDir).log)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    isRoot
      ? "as root, a data dir svc-postgres cannot enter keeps the cluster in a directory of its own, recorded, without loosening the data dir"
      : "as a normal user the cluster lives in the data dir",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir("private")
        const mode = fs.statSync(dataDir).mode & 0o777
        const first = yield* startIn(dataDir)
        assert.isTrue(yield* answers(first.server))
        const layout = EmbeddedPostgres.layout(dataDir)
        if (isRoot) {
          assert.strictEqual(mode, 0o700, "mkdtemp made a private directory, as on a CI runner's home")
          assert.isDefined(layout.externalHome)
          assert.isFalse(layout.pgdata.startsWith(dataDir + path.sep))
          assert.strictEqual(fs.statSync(dataDir).mode & 0o777, 0o700, "the user's directory was not loosened")
          assert.deepStrictEqual(
            JSON.parse(fs.readFileSync(path.join(dataDir, "cluster.json"), "utf8")).home,
            layout.externalHome
          )
          const owner = spawnSync("stat", ["-c", "%U %a", layout.externalHome!], { encoding: "utf8" }).stdout.trim()
          assert.strictEqual(owner, "svc-postgres 700")
        } else {
          assert.isUndefined(layout.externalHome)
          assert.strictEqual(layout.pgdata, path.join(dataDir, "pg"))
        }
        yield* first.close
        // A second start finds the cluster where it was recorded, with its data.
        const second = yield* startIn(dataDir)
        assert.isTrue(second.server.started, "the first start's close stopped it; this start started it again")
        assert.strictEqual(EmbeddedPostgres.layout(dataDir).pgdata, layout.pgdata)
        assert.isTrue(yield* answers(second.server))
        yield* second.close
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live("an unusable data directory fails with a sentence naming SVC_DATA_DIR", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir()
      const file = path.join(dir, "a-file")
      fs.writeFileSync(file, "")
      const error = yield* Effect.flip(Effect.scoped(EmbeddedPostgres.start({ dataDir: path.join(file, "data") })))
      assert.strictEqual(error._tag, "EmbeddedPostgresError")
      assert.match(error.message, /^SVC_DATA_DIR .*a-file\/data is not writable \(ENOTDIR\)$/)
    }).pipe(Effect.scoped))
})
