import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-embedded-"))
    fs.chmodSync(dir, 0o755)
    return dir
  }),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
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
    return { server, close: Scope.close(scope, Exit.void) }
  })

describe("EmbeddedPostgres", () => {
  it.live(
    "a second start on the same data directory joins the running server and leaves it to its owner",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir
        const owner = yield* startIn(dataDir)
        assert.isTrue(owner.server.owned)
        const guest = yield* startIn(dataDir)
        assert.isFalse(guest.server.owned)
        assert.strictEqual(guest.server.port, owner.server.port)
        const pid = postmasterPid(dataDir)
        yield* guest.close
        assert.isTrue(alive(pid), "the guest must not stop the owner's server")
        yield* owner.close
        assert.isFalse(alive(pid), "the owner stops the server when its scope closes")
        assert.isUndefined(postmasterPid(dataDir))
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "a server whose owner was killed is adopted, stopped by the adopter, and keeps its data",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir
        const child = spawn(
          process.execPath,
          [path.join(import.meta.dirname, "fixtures", "holdEmbedded.ts"), dataDir],
          {
            stdio: ["ignore", "pipe", "inherit"]
          }
        )
        const port = yield* Effect.promise(() =>
          new Promise<number>((resolve, reject) => {
            child.stdout.once("data", (chunk) => resolve(Number(String(chunk).trim())))
            child.once("exit", (code) => reject(new Error(`child exited ${code}`)))
          })
        )
        const pid = postmasterPid(dataDir)
        child.kill("SIGKILL")
        yield* Effect.promise(() => new Promise((resolve) => child.once("exit", resolve)))
        assert.isTrue(alive(pid), "a SIGKILLed owner cannot stop its server: this is the orphan to adopt")
        const adopter = yield* startIn(dataDir)
        assert.isTrue(adopter.server.owned)
        assert.strictEqual(adopter.server.port, port)
        yield* adopter.close
        assert.isFalse(alive(pid), "the adopter stops the orphan")
        const again = yield* startIn(dataDir)
        assert.isTrue(again.server.owned)
        assert.isTrue(fs.existsSync(path.join(EmbeddedPostgres.layout(dataDir).pgdata, "PG_VERSION")))
        yield* again.close
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live("an unusable data directory fails with a sentence naming SVC_DATA_DIR", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = path.join(dir, "a-file")
      fs.writeFileSync(file, "")
      const error = yield* Effect.flip(Effect.scoped(EmbeddedPostgres.start({ dataDir: path.join(file, "data") })))
      assert.strictEqual(error._tag, "EmbeddedPostgresError")
      assert.match(error.message, /^SVC_DATA_DIR .*a-file\/data is not writable \(ENOTDIR\)$/)
    }).pipe(Effect.scoped))
})
