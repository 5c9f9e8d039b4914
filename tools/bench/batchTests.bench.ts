// Batch tests (issue 32, "Done when"): 100 scripted definitions x 8 user turns against the reference custom-LLM
// server (examples/custom-llm), run by the scheduler's runner 8 at a time as one worker does, must finish in <= 30 s;
// and 20 reruns of the 100 definitions must give byte-identical verdicts (status and explanation).
//
//   node tools/bench/batchTests.bench.ts [--reruns=20]
import { Runner } from "@svc/agent-test"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as path from "node:path"

const reruns = Number(process.argv.find((a) => a.startsWith("--reruns="))?.split("=")[1] ?? 20)
const server = spawn(process.execPath, [
  path.resolve(import.meta.dirname, "../../examples/custom-llm/server.mjs"),
  "--port",
  "0"
], {
  stdio: ["ignore", "pipe", "inherit"]
})
const url = await new Promise<string>((resolve) => {
  let out = ""
  server.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString()
    const match = /listening on (ws:\/\/\S+)/.exec(out)
    if (match !== null) resolve(match[1]!)
  })
})

// 100 definitions of 8 turns: an order lookup, small talk, and (every 10th) an assertion that fails
const definitions = Array.from({ length: 100 }, (_, i) => ({
  user_turns: [`Where is my order ${i}?`, "ok", "and then?", "hmm", `order ${i + 1} too`, "great", "thanks", "bye"],
  assertions: [
    { type: "tool_called" as const, name: "lookup_order", arguments: { order_id: String(i) } },
    { type: "contains" as const, value: i % 10 === 0 ? "refund" : "has shipped", turn: 1 },
    { type: "not_contains" as const, value: "sorry" },
    { type: "ends_call" as const }
  ],
  dynamic_variables: {}
}))

const batch = Effect.forEach(
  definitions,
  (definition, i) => Runner.runScripted(url, `bench_${i}`, definition, Runner.defaults),
  { concurrency: 8 }
)

const cpu0 = process.cpuUsage()
const t0 = performance.now()
const first = await Effect.runPromise(batch)
const seconds = (performance.now() - t0) / 1000
const cpu = process.cpuUsage(cpu0)
const digest = (outcomes: typeof first) =>
  createHash("sha256").update(JSON.stringify(outcomes.map((o) => o.verdict))).digest("hex")
const counts = { pass: 0, fail: 0, error: 0 }
for (const o of first) counts[o.verdict.status]++
process.stdout.write(
  `100 definitions x 8 turns: ${seconds.toFixed(2)} s, ${(100 / seconds).toFixed(1)} runs/s, ` +
    `${(800 / seconds).toFixed(0)} turns/s, runner CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms ` +
    `(${(((cpu.user + cpu.system) / 1e6 / seconds) * 100).toFixed(0)} % of one core); verdicts ${
      JSON.stringify(counts)
    }\n`
)
const reference = digest(first)
const digests = new Set([reference])
const t1 = performance.now()
for (let r = 0; r < reruns; r++) digests.add(digest(await Effect.runPromise(batch)))
process.stdout.write(
  `determinism: ${reruns} reruns in ${((performance.now() - t1) / 1000).toFixed(1)} s, ` +
    `${digests.size === 1 ? "byte-identical verdicts" : `${digests.size} different verdict sets`} (sha256 ${
      reference.slice(0, 16)
    })\n`
)
server.kill("SIGTERM")
if (seconds > 30 || digests.size !== 1) process.exitCode = 1
