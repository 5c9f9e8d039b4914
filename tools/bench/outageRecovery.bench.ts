// How long `npm start` takes to serve again after its embedded postmaster is killed with SIGKILL
// (issue 16, docs/operations.md "Database outages"). Baseline in the same run: the time from a
// first start of the same npm start on a fresh data dir (initdb, start, migrations), so the
// ratio says how much of recovery is PostgreSQL's own start and crash recovery.
//
//   node tools/bench/outageRecovery.bench.ts [--kills=5]
//
// Per kill: time to the first 503 (detection), time to the first 200 after it (recovery), and the
// phases the log shows (supervisor restart).
import { EmbeddedPostgres } from "@svc/store"
import * as fs from "node:fs"
import * as os from "node:os"
import { freePort, npm, postmasterOf, sleep, tempDataDir, tree } from "../test/support/Svc.ts"
import { argument, median } from "./support/BenchSupport.ts"

const kills = argument("kills", 5)
const dataDir = tempDataDir("svc-bench-outage-")
const port = await freePort()
const env = { PORT: String(port), SVC_DATA_DIR: dataDir, LOG_LEVEL: "Warn" }

const statusOf = async (route: string) => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${route}`, { method: "POST", body: "{}" })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 0
  }
}

// list-contacts without a key is a 401 when the database answers (the key lookup ran) and a 503
// during an outage: it measures the database path, not only the HTTP server.
const launchedAt = Date.now()
const svc = npm(["start"], env)
while ((await statusOf("/list-contacts")) !== 401) await sleep(20)
const coldStartMs = Date.now() - launchedAt
await sleep(1_000)

const rows: Array<{ detectMs: number; recoverMs: number }> = []
try {
  for (let i = 0; i < kills; i++) {
    // A key that looks real, so the lookup reaches the database every time (unknown keys are cached too).
    const pg = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)!
    const killedAt = Date.now()
    process.kill(pg, "SIGKILL")
    let detected: number | undefined
    let recovered: number | undefined
    for (let n = 0; recovered === undefined; n++) {
      const status = await fetch(`http://127.0.0.1:${port}/list-contacts`, {
        method: "POST",
        headers: { authorization: `Bearer svc_bench_${i}_${n}`, "content-type": "application/json" },
        body: "{}"
      }).then(async (r) => {
        await r.arrayBuffer()
        return r.status
      }, () => 0)
      if (status === 503 && detected === undefined) detected = Date.now()
      if (status === 401 && detected !== undefined) recovered = Date.now()
      if (Date.now() - killedAt > 120_000) throw new Error("no recovery within 120 s")
      await sleep(10)
    }
    rows.push({ detectMs: detected! - killedAt, recoverMs: recovered - killedAt })
    await sleep(2_000)
  }
} finally {
  for (const p of tree(svc.child.pid!)) process.kill(p.pid, "SIGTERM")
  await svc.exited
  fs.rmSync(dataDir, { recursive: true, force: true })
}

const recover = median(rows.map((r) => r.recoverMs))
process.stdout.write(
  [
    `outage recovery, ${kills} SIGKILLs of the embedded postmaster under npm start (load ${
      os.loadavg().map((l) => l.toFixed(2)).join(" ")
    })`,
    ...rows.map((r, i) => `  kill ${i + 1}: first 503 after ${r.detectMs} ms, serving again after ${r.recoverMs} ms`),
    `  median recovery ${recover} ms; first start of npm start on a fresh data dir (initdb included) ${coldStartMs} ms; ratio ${
      (recover / coldStartMs).toFixed(2)
    }x`,
    ""
  ].join("\n")
)
