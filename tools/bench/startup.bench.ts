// Start-up benchmark (issue 2): what the bootstrap adds to a run, and warm `npm start` to ready,
// each beside a baseline measured in the same run on the same (shared, noisy) machine. Reports
// medians and ratios as a Markdown table for docs/benchmarks.md.
//
//   npm run bench:startup            (ROUNDS=7 by default)
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")
const rounds = Number(process.env["ROUNDS"] ?? 7)
// What a user's shell has: the machine's own node and npm first (Node 20 here), not ours.
const systemPath = (process.env["PATH"] ?? "").split(":").filter((p) => !p.includes(".toolchain")).join(":")

const median = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

const timeSync = (cmd: string, args: Array<string>, env: NodeJS.ProcessEnv) => {
  const t = performance.now()
  const result = spawnSync(cmd, args, { cwd: root, env, stdio: "ignore" })
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${result.status}`)
  return performance.now() - t
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** Spawns a server, waits for `url` to answer 200, stops it, returns ms to the first 200. */
const timeToReady = async (cmd: string, args: Array<string>, env: NodeJS.ProcessEnv, url: string) => {
  const t = performance.now()
  const child = spawn(cmd, args, { cwd: root, env, stdio: "ignore", detached: true })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) break
    } catch {
      // not listening yet
    }
    if (performance.now() - t > 120_000) throw new Error(`${url} not ready after 120 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const elapsed = performance.now() - t
  process.kill(-child.pid!, "SIGTERM")
  await exited
  return elapsed
}

const node24 = process.execPath
const userEnv = { ...process.env, PATH: systemPath }

// 1. Bootstrap overhead on a warm tree: the same empty program with and without the bootstrap.
const direct: Array<number> = []
const boot: Array<number> = []
const viaNpm: Array<number> = []
for (let i = 0; i < rounds; i++) {
  direct.push(timeSync(node24, ["tools/bench/noop.mjs"], userEnv))
  boot.push(timeSync("node", ["tools/bootstrap/bootstrap.cjs", "bench:noop"], userEnv))
  viaNpm.push(timeSync("npm", ["run", "--silent", "bench:noop:boot"], userEnv))
}

// 2. Warm `npm start` to /readyz 200, beside a bare node:http server started the same way.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-start-"))
fs.chmodSync(dataDir, 0o755)
const bare: Array<number> = []
const start: Array<number> = []
try {
  // First start creates the cluster (initdb); it is the cold case and not counted as warm.
  const coldPort = await freePort()
  const cold = await timeToReady(
    "npm",
    ["start"],
    { ...userEnv, PORT: String(coldPort), SVC_DATA_DIR: dataDir },
    `http://127.0.0.1:${coldPort}/readyz`
  )
  for (let i = 0; i < rounds; i++) {
    const p1 = await freePort()
    bare.push(
      await timeToReady(
        node24,
        ["-e", `require("node:http").createServer((q,s)=>s.end("ok")).listen(${p1})`],
        userEnv,
        `http://127.0.0.1:${p1}/`
      )
    )
    const p2 = await freePort()
    start.push(
      await timeToReady(
        "npm",
        ["start"],
        { ...userEnv, PORT: String(p2), SVC_DATA_DIR: dataDir },
        `http://127.0.0.1:${p2}/readyz`
      )
    )
  }
  const fmt = (ms: number) => `${ms.toFixed(0)} ms`
  const rows = [
    ["empty program, Node 24 directly (baseline)", median(direct), undefined],
    [
      "empty program through the bootstrap (`node tools/bootstrap/bootstrap.cjs`)",
      median(boot),
      median(boot) - median(direct)
    ],
    [
      "empty program through `npm run` + the bootstrap (what `npm start`/`npm test` add)",
      median(viaNpm),
      median(viaNpm) - median(direct)
    ],
    ["bare node:http server to first 200 (baseline)", median(bare), undefined],
    ["`npm start` (warm: installed, cluster exists) to /readyz 200", median(start), median(start) - median(bare)],
    ["`npm start` first start on a new SVC_DATA_DIR (initdb), one run", cold, undefined]
  ] as const
  process.stdout.write(
    `Node ${process.version} (bench), system node ${
      spawnSync("node", ["--version"], { env: userEnv, encoding: "utf8" }).stdout.trim()
    }` +
      ` for the user commands; ${rounds} rounds, medians; ${os.cpus().length} cores, load ${
        os.loadavg()[0]?.toFixed(1)
      }\n\n` +
      "| measurement | median | over baseline |\n|---|---:|---:|\n" +
      rows.map(([name, ms, over]) => `| ${name} | ${fmt(ms)} | ${over === undefined ? "" : `+${fmt(over)}`} |`).join(
        "\n"
      ) +
      "\n"
  )
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true })
}
