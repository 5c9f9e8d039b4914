// Where a V8 CPU profile's time goes (issue 17, "measure where the time goes first"): self time by function and by
// origin (our packages, effect, @effect/sql-pg and pg, node internals, GC, idle), as Markdown tables.
//
//   node tools/bench/cpuProfileSummary.ts PROFILE.cpuprofile [top=25]
import * as fs from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [file, topArg] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: cpuProfileSummary.ts PROFILE.cpuprofile [top]")
const top = Number(topArg ?? 25)
const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const selfUs = new Map<number, number>()
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))

const origin = (node: Node): string => {
  const { functionName, url } = node.callFrame
  if (functionName === "(idle)") return "idle"
  if (functionName === "(garbage collector)") return "GC"
  if (functionName === "(program)") return "V8 (program)"
  if (url.includes("/packages/") || url.includes("/apps/")) {
    const m = /\/(packages|apps)\/([^/]+)\//.exec(url)
    return `svc ${m?.[2] ?? "?"}`
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (nm !== null) return nm[1]!
  if (url.startsWith("node:") || url === "") return "node internals"
  return url
}

const total = [...selfUs.values()].reduce((a, b) => a + b, 0)
const busy = total - [...selfUs].filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)")
  .reduce((a, [, us]) => a + us, 0)
const byOrigin = new Map<string, number>()
const byFunction = new Map<string, number>()
for (const [id, us] of selfUs) {
  const node = byId.get(id)!
  byOrigin.set(origin(node), (byOrigin.get(origin(node)) ?? 0) + us)
  const where = node.callFrame.url.replace(/^.*\/(node_modules|packages|apps)\//, "$1/")
  const key = `${node.callFrame.functionName || "(anonymous)"} ${where}:${node.callFrame.lineNumber + 1}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + us)
}
const pct = (us: number) => `${(100 * us / busy).toFixed(1)} %`
const rows = (map: Map<string, number>, n: number) =>
  [...map].filter(([k]) => k !== "idle" && !k.startsWith("(idle)")).sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, us]) => `| ${k.replaceAll("|", "\\|")} | ${(us / 1000).toFixed(0)} | ${pct(us)} |`).join("\n")
process.stdout.write(
  `${file}: ${(total / 1e6).toFixed(1)} s profiled, ${
    (busy / 1e6).toFixed(1)
  } s busy (shares below are of busy time)\n\n` +
    `| origin | self ms | share |\n|---|---:|---:|\n${rows(byOrigin, 40)}\n\n` +
    `| function | self ms | share |\n|---|---:|---:|\n${rows(byFunction, top)}\n`
)
