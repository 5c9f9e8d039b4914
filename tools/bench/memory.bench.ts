// Memory of create-batch-call (issue 16, item 3): the real server as its own process, sent one 100,000-task batch
// with overrides, then 4 of them at once; beside the same measurements of a baseline build (the code before the
// change, `git archive` of --baseline, default 70a742e) in the same run, on the same embedded PostgreSQL.
//
//   npm run bench:memory     [--tasks=100000] [--concurrent=4] [--settle=10] [--baseline=70a742e]
//                            [--variant="--max-semi-space-size=16"]
//
// --variant adds a third server: this build started with those Node options, to measure a runtime knob.
//
// RSS is read from /proc/<pid>/status: the peak is VmHWM (reset through /proc/<pid>/clear_refs before each step)
// and the largest VmRSS seen by a 10 ms sampler; "after" is VmRSS once the server has been idle --settle seconds.
// Heap figures come from a probe preloaded into both builds (support/memoryProbe.mjs), read on SIGUSR2. Prints a
// Markdown table; the exit code is 0 either way (a loaded machine is not a regression).
import * as Database from "@svc/store/db/Database.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { Effect, Layer, Redacted } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { FROM_NUMBER, heavyBatchBody } from "./support/BatchBodies.ts"
import { argument, benchDatabase } from "./support/BenchSupport.ts"

const root = path.resolve(import.meta.dirname, "..", "..")
const TASKS = argument("tasks", 100_000)
const CONCURRENT = argument("concurrent", 4)
const SETTLE_SECONDS = argument("settle", 10)
const option = (name: string) => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`))
  return arg === undefined ? undefined : arg.slice(name.length + 3)
}
const BASELINE = option("baseline") ?? "70a742e"
const VARIANT = option("variant")
const MiB = 1024 * 1024

const say = (s: string) => process.stderr.write(`[bench] ${s}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

// ---------------------------------------------------------------------------------------------------------------
// The baseline build: the tree at --baseline, with its own workspace links and everything else shared
// ---------------------------------------------------------------------------------------------------------------

const baselineTree = (rev: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-memory-baseline-"))
  const archive = execFileSync("git", ["-C", root, "archive", rev, "apps", "packages", "tools", "package.json"], {
    maxBuffer: 512 * MiB
  })
  execFileSync("tar", ["-x", "-C", dir], { input: archive })
  const modules = path.join(dir, "node_modules")
  fs.mkdirSync(modules)
  for (const entry of fs.readdirSync(path.join(root, "node_modules"))) {
    if (entry === "@svc") continue
    fs.symlinkSync(path.join(root, "node_modules", entry), path.join(modules, entry))
  }
  // the workspace packages must resolve inside the baseline tree, not to the working copy's sources
  fs.mkdirSync(path.join(modules, "@svc"))
  for (const entry of fs.readdirSync(path.join(root, "node_modules", "@svc"))) {
    const target = fs.readlinkSync(path.join(root, "node_modules", "@svc", entry))
    fs.symlinkSync(target, path.join(modules, "@svc", entry))
  }
  return dir
}

// ---------------------------------------------------------------------------------------------------------------
// A server process and its memory
// ---------------------------------------------------------------------------------------------------------------

interface Server {
  readonly pid: number
  readonly port: number
  readonly memory: (forceGc: boolean) => Promise<NodeJS.MemoryUsage>
  readonly stop: () => Promise<void>
}

const status = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  const text = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)
  return match === null ? 0 : Number(match[1]) * 1024
}

const startServer = async (cwd: string, url: string, nodeOptions: string | undefined): Promise<Server> => {
  const port = await freePort()
  const memoryFile = path.join(os.tmpdir(), `svc-bench-memory-${process.pid}-${port}.jsonl`)
  const child = spawn(
    process.execPath,
    [
      ...(nodeOptions === undefined ? [] : nodeOptions.split(" ")),
      "--expose-gc",
      "--import",
      path.join(root, "tools/bench/support/memoryProbe.mjs"),
      "apps/server/src/main.ts"
    ],
    {
      cwd,
      env: {
        ...process.env,
        DATABASE_URL: url,
        PORT: String(port),
        LOG_LEVEL: "Warn",
        SVC_BENCH_MEMORY_FILE: memoryFile
      },
      stdio: ["ignore", "ignore", "inherit"]
    }
  )
  let exited: number | null | undefined
  child.once("exit", (code) => (exited = code))
  for (;;) {
    if (exited !== undefined) throw new Error(`server in ${cwd} exited ${exited}`)
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  const memory = async (forceGc: boolean) => {
    const lines = fs.existsSync(memoryFile) ? fs.readFileSync(memoryFile, "utf8").split("\n").length : 1
    if (forceGc) fs.writeFileSync(`${memoryFile}.gc`, "")
    child.kill("SIGUSR2")
    for (;;) {
      await sleep(50)
      const all = fs.existsSync(memoryFile) ? fs.readFileSync(memoryFile, "utf8").split("\n") : []
      if (all.length > lines) {
        fs.rmSync(`${memoryFile}.gc`, { force: true })
        return JSON.parse(all[all.length - 2]!) as NodeJS.MemoryUsage
      }
    }
  }
  return {
    pid: child.pid!,
    port,
    memory,
    stop: async () => {
      child.kill("SIGTERM")
      while (exited === undefined) await sleep(50)
      fs.rmSync(memoryFile, { force: true })
    }
  }
}

/** POSTs `body` with a Content-Length, as the vendor's client does; resolves with the status and the time. */
const post = (port: number, key: string, body: Buffer) =>
  new Promise<{ status: number; ms: number; text: string }>((resolve, reject) => {
    const started = performance.now()
    const request = http.request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/create-batch-call",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": body.length }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          ms: performance.now() - started,
          text: Buffer.concat(chunks).toString("utf8")
        }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(body)
  })

interface Step {
  readonly peak: number
  readonly seconds: number
  readonly statuses: ReadonlyArray<number>
}

/** Runs `requests` at once; the server's peak RSS meanwhile (VmHWM reset before, and a 10 ms VmRSS sampler). */
const measured = async (server: Server, requests: () => Promise<ReadonlyArray<{ status: number; text: string }>>) => {
  fs.writeFileSync(`/proc/${server.pid}/clear_refs`, "5")
  let sampled = 0
  const sampler = setInterval(() => {
    sampled = Math.max(sampled, status(server.pid, "VmRSS"))
  }, 10)
  const started = performance.now()
  const answers = await requests()
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  for (const answer of answers) {
    if (answer.status !== 200) say(`answer ${answer.status}: ${answer.text.slice(0, 300)}`)
  }
  return { peak: Math.max(sampled, status(server.pid, "VmHWM")), seconds, statuses: answers.map((a) => a.status) }
}

interface Run {
  readonly name: string
  readonly idle: number
  readonly idleHeap: number
  readonly single: Step
  readonly singleAfter: number
  readonly concurrent: Step
  readonly concurrentAfter: number
  readonly heapAfter: number
  readonly rssAfterGc: number
  readonly heapAfterGc: number
}

const measure = async (
  name: string,
  cwd: string,
  url: string,
  key: string,
  body: Buffer,
  nodeOptions?: string
): Promise<Run> => {
  say(`${name}: starting the server`)
  const server = await startServer(cwd, url, nodeOptions)
  try {
    // warm: JIT, pool, prepared statements
    const small = Buffer.from(heavyBatchBody(10, "warm-up"))
    for (let i = 0; i < 3; i++) await post(server.port, key, small)
    await sleep(1000)
    const idleUsage = await server.memory(false)
    const idle = status(server.pid, "VmRSS")
    say(`${name}: one batch of ${(body.length / MiB).toFixed(0)} MiB`)
    const single = await measured(server, async () => [await post(server.port, key, body)])
    await sleep(SETTLE_SECONDS * 1000)
    const singleAfter = status(server.pid, "VmRSS")
    say(`${name}: ${CONCURRENT} at once`)
    const concurrent = await measured(
      server,
      () => Promise.all(Array.from({ length: CONCURRENT }, () => post(server.port, key, body)))
    )
    await sleep(SETTLE_SECONDS * 1000)
    const concurrentAfter = status(server.pid, "VmRSS")
    const heapAfter = (await server.memory(false)).heapUsed
    const afterGc = await server.memory(true)
    return {
      name,
      idle,
      idleHeap: idleUsage.heapUsed,
      single,
      singleAfter,
      concurrent,
      concurrentAfter,
      heapAfter,
      rssAfterGc: afterGc.rss,
      heapAfterGc: afterGc.heapUsed
    }
  } finally {
    await server.stop()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------------

const database = await benchDatabase("memory")
const baselineDir = baselineTree(BASELINE)
try {
  const { key } = await Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        Layer.build(ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(database.url)))),
        (context) =>
          Effect.provideContext(
            Effect.gen(function*() {
              const keys = yield* ApiKeys
              const orgId = yield* keys.createOrg("memory bench", 50)
              yield* keys.addPhoneNumber(orgId, FROM_NUMBER)
              yield* keys.addAgent(orgId, "agent_a", 1)
              return { key: yield* keys.createKey(orgId) }
            }),
            context
          )
      )
    )
  )
  const body = Buffer.from(heavyBatchBody(TASKS))
  const loadBefore = os.loadavg()[0]!
  const url = Redacted.value(database.url)
  const runs = [
    await measure(`baseline (${BASELINE})`, baselineDir, url, key, body),
    await measure("this build", root, url, key, body),
    ...(VARIANT === undefined ? [] : [await measure(`this build, node ${VARIANT}`, root, url, key, body, VARIANT)])
  ]
  const loadAfter = os.loadavg()[0]!
  const mib = (n: number) => (n / MiB).toFixed(0)
  const ratio = (n: number) => (n / body.length).toFixed(2)
  const row = (run: Run) => {
    const single = run.single.peak - run.idle
    const perRequest = (run.concurrent.peak - run.idle) / CONCURRENT
    return `| ${run.name} | ${mib(run.idle)} / ${mib(run.idleHeap)} | ${mib(single)} | ${ratio(single)}x | ${
      run.single.seconds.toFixed(1)
    } | ` +
      `${mib(run.singleAfter)} | ${mib(run.concurrent.peak - run.idle)} | ${ratio(perRequest)}x | ` +
      `${run.concurrent.seconds.toFixed(1)} | ${mib(run.concurrentAfter)} | ${mib(run.heapAfter)} | ` +
      `${mib(run.rssAfterGc)} / ${mib(run.heapAfterGc)} | ${
        [...run.single.statuses, ...run.concurrent.statuses].join(" ")
      } |`
  }
  process.stdout.write(
    `create-batch-call memory: ${TASKS.toLocaleString("en-US")} tasks with overrides, body ` +
      `${body.length.toLocaleString("en-US")} bytes (${mib(body.length)} MiB); then ${CONCURRENT} at once; ` +
      `Node ${process.version}, ${os.cpus()[0]?.model ?? "unknown CPU"} x ${os.cpus().length}, ` +
      `${(os.totalmem() / 1024 / MiB).toFixed(0)} GiB; 1-minute load average ${loadBefore.toFixed(2)} before, ` +
      `${loadAfter.toFixed(2)} after; settle ${SETTLE_SECONDS} s. MiB unless marked; deltas over the idle RSS.\n\n` +
      "| build | idle RSS / heap used | 1 request: peak delta | / body | s | RSS after | " +
      `${CONCURRENT} at once: peak delta | per request / body | s | RSS after | heap used after | ` +
      "RSS / heap after forced GC | statuses |\n" +
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n" +
      runs.map(row).join("\n") + "\n\n" +
      "Goal: under 4x the body per request, released afterwards.\n"
  )
} finally {
  fs.rmSync(baselineDir, { recursive: true, force: true })
  await database.close()
}
