// The lint floor (issue 17, item 5): the cheapest possible "linter" over the same files, the
// baseline row of tools/bench/lint.bench.ts and tools/bench/lintCache.bench.ts. It walks the paths
// (folders in name order), reads each .json/.yaml/.yml file, parses it (JSON.parse, js-yaml: the
// linter's parsers) and visits every value once with an iterative walk; no rules, no positions, no
// report. Prints the number of files and values so the work cannot be optimised away.
//
//   node tools/bench/lintFloor.ts PATH...
import { load } from "js-yaml"
import * as fs from "node:fs"
import * as path from "node:path"

let files = 0
let values = 0

const visit = (file: string) => {
  const text = fs.readFileSync(file, "utf8")
  const doc: unknown = file.endsWith(".json") ? JSON.parse(text) : load(text)
  files++
  const stack: Array<unknown> = [doc]
  while (stack.length > 0) {
    const v = stack.pop()
    values++
    if (Array.isArray(v)) { for (const x of v) stack.push(x) }
    else if (v !== null && typeof v === "object") { for (const x of Object.values(v)) stack.push(x) }
  }
}

const walk = (p: string) => {
  const stat = fs.statSync(p)
  if (stat.isDirectory()) { for (const name of fs.readdirSync(p).sort()) walk(path.join(p, name)) }
  else if (/\.(json|ya?ml)$/.test(p)) visit(p)
}

const inputs = process.argv.slice(2)
if (inputs.length === 0) {
  process.stderr.write("usage: node tools/bench/lintFloor.ts PATH...\n")
  process.exit(2)
}
for (const input of inputs) walk(input)
process.stdout.write(`${files} files, ${values} values\n`)
