// Issue 27, item 5: a client in another pid namespace (a container sharing the data dir) found the running
// server's client record dead (its pid names nothing there), deleted it, and every later admin command then
// stopped PostgreSQL under the running server. Liveness is now a lock each client holds on its record
// (decision 0016), which every namespace sees alike. The other namespace is made with
// `unshare --pid --fork --mount-proc` (util-linux), as a container's would be; it shares the network, so its
// client can join the server on 127.0.0.1.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as EmbeddedPostgres from "../../src/db/EmbeddedPostgres.ts"

const holdEmbedded = path.join(import.meta.dirname, "fixtures", "holdEmbedded.ts")

/** Why the namespace cannot be made here, or undefined when it can (CI runs as root on Debian, where it can). */
const unshareMissing = (() => {
  const probe = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { encoding: "utf8" })
  if (probe.error !== undefined) return `unshare is not installed (${probe.error.message})`
  if (probe.status !== 0) return `unshare --pid is not permitted here: ${probe.stderr.trim()}`
  return undefined
})()

const postmasterPid = (dataDir: string) => {
  try {
    return Number(
      fs.readFileSync(path.join(EmbeddedPostgres.layout(dataDir).pgdata, "postmaster.pid"), "utf8").split("\n")[0]
    )
  } catch {
    return undefined
  }
}

const alive = (pid: number | undefined) => {
  if (pid === undefined) return false
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

const children = (pid: number) =>
  fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((candidate) => {
    try {
      const stat = fs.readFileSync(`/proc/${candidate}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid
    } catch {
      return false
    }
  })

interface Holder {
  readonly port: number
  readonly started: boolean
  /** The holder's pid as this namespace sees it (signals go there). */
  readonly pid: number
  readonly exited: Promise<number | null>
  readonly child: ChildProcess
}

/**
 * A process that starts or joins the server and holds it until SIGTERM (fixtures/holdEmbedded.ts), in this pid
 * namespace or, with `namespaced`, in a new one of its own (where it is pid 1).
 */
const holder = (dataDir: string, namespaced: boolean) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const command = namespaced
        ? ["unshare", [
          "--pid",
          "--fork",
          "--mount-proc",
          "--kill-child=SIGKILL",
          process.execPath,
          holdEmbedded,
          dataDir
        ]]
        : [process.execPath, [holdEmbedded, dataDir]]
      const child = spawn(command[0] as string, command[1] as Array<string>, { stdio: ["ignore", "pipe", "pipe"] })
      let stderr = ""
      child.stderr!.on("data", (chunk) => (stderr += chunk))
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      return new Promise<Holder>((resolve, reject) => {
        child.stdout!.once("data", (chunk) => {
          const [port, started] = String(chunk).trim().split(" ")
          // With unshare, the holder is unshare's child; its pid here is not the 1 it has in its namespace.
          const pid = namespaced ? children(child.pid!)[0]! : child.pid!
          resolve({ port: Number(port), started: started === "true", pid, exited, child })
        })
        void exited.then((code) => reject(new Error(`holder exited ${code}: ${stderr}`)))
      })
    }),
    (held) => Effect.sync(() => held.child.kill("SIGKILL"))
  )

/** SIGTERM: the holder leaves as a client (its scope closes) and exits 0. */
const leave = (held: Holder) =>
  Effect.promise(() => {
    process.kill(held.pid, "SIGTERM")
    return held.exited
  })

const startHere = (dataDir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const server = yield* Scope.provide(EmbeddedPostgres.start({ dataDir }), scope)
    return { server, close: Scope.close(scope, Exit.void) }
  })

/**
 * A client in another pid namespace that comes and goes, whatever becomes of it (main's refused to start a
 * second postmaster, after deleting the server's record): the line it printed, or undefined, and its exit code.
 */
const visit = (dataDir: string) =>
  Effect.promise(async () => {
    const child = spawn(
      "unshare",
      ["--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL", process.execPath, holdEmbedded, dataDir],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    child.stderr.on("data", (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    const line = await Promise.race([
      new Promise<string>((resolve) => child.stdout.once("data", (chunk) => resolve(String(chunk).trim()))),
      exited.then(() => undefined)
    ])
    if (line !== undefined) process.kill(children(child.pid!)[0]!, "SIGTERM")
    return { line, code: await exited, output }
  })

const freshDataDir = Effect.acquireRelease(
  Effect.sync(() => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-pidns-"))
    fs.chmodSync(dataDir, 0o755)
    return dataDir
  }),
  (dataDir) =>
    Effect.sync(() => {
      const external = EmbeddedPostgres.layout(dataDir).externalHome
      if (external !== undefined) fs.rmSync(external, { recursive: true, force: true })
      fs.rmSync(dataDir, { recursive: true, force: true })
    })
)

const skipped = unshareMissing === undefined ? "" : ` (skipped: ${unshareMissing})`

describe("EmbeddedPostgres across pid namespaces", () => {
  it.live.skipIf(unshareMissing !== undefined)(
    `after a client of another pid namespace has come and gone, the next admin command does not stop the server${skipped}`,
    () =>
      Effect.gen(function*() {
        const dataDir = yield* freshDataDir
        // This process plays the running server: it starts PostgreSQL.
        const here = yield* startHere(dataDir)
        assert.isTrue(here.server.started)
        const pg = postmasterPid(dataDir)
        // The container's admin command: it reads the data dir from another pid namespace.
        yield* visit(dataDir)
        // The next admin command here comes and goes: the server's record must still count, so this one is not
        // the last client and must not stop PostgreSQL under the server.
        const next = yield* holder(dataDir, false)
        assert.isFalse(next.started)
        assert.strictEqual(yield* leave(next), 0)
        assert.isTrue(alive(pg), "the other namespace's client deleted the server's record: the next one stopped it")
        yield* here.close
        assert.isFalse(alive(pg), "the server, the last client, stopped it")
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )

  it.live.skipIf(unshareMissing !== undefined)(
    `a client of another pid namespace joins the running server and counts while it runs${skipped}`,
    () =>
      Effect.gen(function*() {
        const dataDir = yield* freshDataDir
        const here = yield* startHere(dataDir)
        const pg = postmasterPid(dataDir)

        // It shares this namespace's network, so it can join on 127.0.0.1 (decision 0016).
        const away = yield* holder(dataDir, true)
        assert.notStrictEqual(
          fs.readlinkSync(`/proc/${away.pid}/ns/pid`),
          fs.readlinkSync("/proc/self/ns/pid"),
          "the holder runs in a pid namespace of its own"
        )
        assert.isFalse(away.started, "it joined the running server")
        assert.strictEqual(away.port, here.server.port)

        // This process leaves while the client of the other namespace uses the server.
        yield* here.close
        assert.isTrue(alive(pg), "the client in the other namespace counts: the server stays up for it")

        // That client leaves last. It cannot stop a server started from this namespace (the postmaster's pid
        // means nothing there); the next client here joins it and, as the last one, stops it.
        assert.strictEqual(yield* leave(away), 0)
        assert.isTrue(alive(pg), "left to the next client of the namespace that started it")
        const last = yield* startHere(dataDir)
        assert.isFalse(last.server.started)
        assert.strictEqual(last.server.port, here.server.port)
        yield* last.close
        assert.isFalse(alive(pg), "the last client stopped it")
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )
})
