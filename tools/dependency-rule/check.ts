// `npm run check:deps`: the monorepo's dependency rule (rule.js beside this file) checked over
// every import of every source file and every declared dependency of every workspace package.
// ESLint applies the same rule per file; this check also catches what ESLint does not see:
// package.json dependencies and files outside ESLint's reach, rule 4 (no SQL function body in a migration
// after 0027: bodies live in packages/store/src/functions/), which is about SQL text, not imports, and the part of
// rule 6 (an app's main.ts only composes layers) that is about its code rather than its imports.
// Exit 1 lists every violation.
import * as fs from "node:fs"
import * as path from "node:path"
import { functionBodyViolations, layerOf, mainViolations, violation } from "./rule.js"

const IMPORT =
  /(?:^|[^\w.])(?:import|export)\s[^"'`;]*?\sfrom\s*["']([^"']+)["']|(?:^|[^\w.])import\s*\(\s*["']([^"']+)["']\s*\)|(?:^|[^\w.])import\s+["']([^"']+)["']/gm

/** Every (specifier, line) imported by a TypeScript/JavaScript source text. */
export const importsOf = (source: string): Array<{ readonly spec: string; readonly line: number }> => {
  const found: Array<{ spec: string; line: number }> = []
  for (const match of source.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3]
    if (spec === undefined) continue
    const at = match.index + match[0].search(/import|export/)
    found.push({ spec, line: source.slice(0, at).split("\n").length })
  }
  return found
}

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/

const walk = (dir: string, out: Array<string>) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(full, out)
    else if (SOURCE.test(entry.name)) out.push(full)
  }
  return out
}

/** Every violation under `root` as `file:line: message`, sorted. */
export const check = (root: string): Array<string> => {
  const problems: Array<string> = []
  for (const top of ["packages", "apps"]) {
    const base = path.join(root, top)
    if (!fs.existsSync(base)) continue
    for (const name of fs.readdirSync(base)) {
      const dir = path.join(base, name)
      const rel = `${top}/${name}`
      const manifest = path.join(dir, "package.json")
      if (!fs.existsSync(manifest)) continue
      if (!layerOf(rel)) {
        problems.push(
          `${rel}: no layer of the dependency rule owns this package (add it to tools/dependency-rule/rule.js)`
        )
        continue
      }
      const deps = Object.keys(JSON.parse(fs.readFileSync(manifest, "utf8")).dependencies ?? {})
      for (const dep of deps) {
        const message = violation(`${rel}/src/index.ts`, dep)
        if (message) problems.push(`${rel}/package.json: dependency ${message}`)
      }
      for (const file of walk(dir, [])) {
        const relFile = path.relative(root, file).split(path.sep).join("/")
        const source = fs.readFileSync(file, "utf8")
        for (const { spec, line } of importsOf(source)) {
          const message = violation(relFile, spec)
          if (message) problems.push(`${relFile}:${line}: ${message}`)
        }
        for (
          const { line, message } of [...functionBodyViolations(relFile, source), ...mainViolations(relFile, source)]
        ) {
          problems.push(`${relFile}:${line}: ${message}`)
        }
      }
    }
  }
  return problems.sort()
}

if (import.meta.main) {
  const root = path.resolve(import.meta.dirname, "..", "..")
  const problems = check(root)
  if (problems.length > 0) {
    process.stderr.write(
      `dependency rule broken (docs/architecture.md):\n${problems.map((p) => `  ${p}`).join("\n")}\n`
    )
    process.exitCode = 1
  } else {
    process.stdout.write("dependency rule holds\n")
  }
}
