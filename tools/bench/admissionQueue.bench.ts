// What a request waiting for admission costs the server (issue 27 item 7, decision 0547): the figure behind
// SVC_HTTP_MAX_QUEUED's default. One server with one slot (SVC_HTTP_MAX_IN_FLIGHT=1, a queue timeout of two minutes
// so nothing leaves the queue), the slot held by a create-batch-call whose body never ends; then N small requests on
// their own connections park in the queue (counted by svc_http_admission_waiting on /metrics). The server's heap
// after a forced full GC and its RSS (tools/bench/support/memoryProbe.mjs, injected with --import) are read before
// and after, per parked request.
//
//   node tools/bench/admissionQueue.bench.ts   (BENCH_PARKED=500,1000,2000)
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")
const LEVELS = (process.env["BENCH_PARKED"] ?? "500,1000,2000").split(",").map(Number)
const say = (s: string) => process.stderr.write(`[bench] ${s}\n`)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const until = async (what: string, check: () => Promise<boolean>, deadlineMs = 120_000) => {
  const stop = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-queue-"))
fs.chmodSync(dataDir, 0o755)
const memoryFile = path.join(dataDir, "memory.jsonl")
fs.writeFileSync(`${memoryFile}.gc`, "")
const sockets: Array<net.Socket> = []
let child: ReturnType<typeof spawn> | undefined
try {
  const server = await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))
  const key = await Effect.runPromise(Effect.scoped(Effect.flatMap(
    Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(server.url)))),
    (context) =>
      Effect.provideContext(
        Effect.gen(function*() {
          const keys = yield* ApiKeys
          return yield* keys.createKey(yield* keys.createOrg("bench"))
        }),
        context
      )
  )))
  const port = await freePort()
  child = spawn(process.execPath, [
    "--expose-gc",
    "--import",
    path.join(root, "tools/bench/support/memoryProbe.mjs"),
    "apps/server/src/main.ts"
  ], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: Redacted.value(server.url),
      PORT: String(port),
      LOG_LEVEL: "Warn",
      SVC_HTTP_MAX_IN_FLIGHT: "1",
      SVC_HTTP_MAX_QUEUED: "100000",
      SVC_HTTP_QUEUE_TIMEOUT_MS: "120000",
      SVC_BENCH_MEMORY_FILE: memoryFile
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const metric = async (name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    // a gauge never set yet is not listed: 0
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
  }
  await until("the server", () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false))
  const memory = async () => {
    const lines = fs.existsSync(memoryFile) ? fs.readFileSync(memoryFile, "utf8").trim().split("\n").length : 0
    child!.kill("SIGUSR2")
    await until(
      "the memory probe",
      async () => fs.existsSync(memoryFile) && fs.readFileSync(memoryFile, "utf8").trim().split("\n").length > lines
    )
    return JSON.parse(fs.readFileSync(memoryFile, "utf8").trim().split("\n").at(-1)!) as {
      heapUsed: number
      rss: number
    }
  }
  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: "127.0.0.1", port }, () => resolve(socket))
      socket.once("error", reject)
      sockets.push(socket)
    })
  // The one slot: an upload that never ends.
  const holder = await connect()
  holder.write(
    `POST /create-batch-call HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
      `content-type: application/json\r\ncontent-length: 1000000\r\n\r\n{"from_number":"+14155550100","tasks":[`
  )
  await until("the slot taken", () => metric("svc_http_admission_running").then((n) => n === 1))
  const before = await memory()
  const body = JSON.stringify({ limit: 10 })
  let parked = 0
  const rows: Array<string> = []
  for (const level of LEVELS) {
    while (parked < level) {
      const socket = await connect()
      socket.write(
        `POST /list-contacts HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length}\r\n\r\n${body}`
      )
      parked++
    }
    await until(`${level} parked`, () => metric("svc_http_admission_waiting").then((n) => n === level))
    const after = await memory()
    const perHeap = (after.heapUsed - before.heapUsed) / level
    const perRss = (after.rss - before.rss) / level
    say(`${level} parked: heap +${(perHeap / 1024).toFixed(1)} KiB, RSS +${(perRss / 1024).toFixed(1)} KiB each`)
    rows.push(
      `| ${level} | ${((after.heapUsed - before.heapUsed) / 2 ** 20).toFixed(1)} | ${(perHeap / 1024).toFixed(1)} | ` +
        `${((after.rss - before.rss) / 2 ** 20).toFixed(1)} | ${(perRss / 1024).toFixed(1)} |`
    )
  }
  process.stdout.write(
    `requests parked in the admission queue (list-contacts, own connection each); heap after a forced GC; ` +
      `${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}\n\n` +
      "| parked | heap MiB | heap KiB each | RSS MiB | RSS KiB each |\n|---:|---:|---:|---:|---:|\n" +
      rows.join("\n") + "\n"
  )
} finally {
  for (const socket of sockets) socket.destroy()
  child?.kill("SIGTERM")
  if (child !== undefined && child.exitCode === null) await new Promise((resolve) => child!.once("exit", resolve))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
