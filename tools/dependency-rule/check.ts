// `npm run check:deps`: the monorepo's dependency rule (rule.js beside this file) checked over
// every import of every source file and every declared dependency of every workspace package.
// ESLint applies the same rule per file; this check also catches what ESLint does not see:
// package.json dependencies and files outside ESLint's reach, rule 4 (no SQL function body in a migration
// after 0027: bodies live in packages/store/src/functions/), which is about SQL text, not imports, and the part of
// rule 6 (an app's main.ts only composes layers) that is about its code rather than its imports.
// Exit 1 lists every violation.
import * as fs from "node:fs"
import * as path from "node:path"
import { functionBodyViolations, layerOf, mainViolations, typeOnlyPending, violation } from "./rule.js"

const IMPORT =
  /(?:^|[^\w.])(?:import|export)\s([^"'`;]*?)\sfrom\s*["']([^"']+)["']|(?:^|[^\w.])import\s*\(\s*["']([^"']+)["']\s*\)|(?:^|[^\w.])import\s+["']([^"']+)["']/gm

/**
 * An import clause that the compiler erases: `import type {…}`, `import type X`, `import type * as X`,
 * `export type {…} from`, `export type * from`. Not `import { type A }`: under `verbatimModuleSyntax` that compiles to
 * `import {} from "…"`, which still loads the module (rule 3 in rule.js).
 */
const TYPE_ONLY = /^type(?:\s*[{*]|\s+[\w$]+\s*$)/

/**
 * Every (specifier, line) imported by a TypeScript/JavaScript source text, and whether the import is erased when
 * compiled (`typeOnly`); dynamic and side-effect imports never are.
 */
export const importKindsOf = (
  source: string
): Array<{ readonly spec: string; readonly line: number; readonly typeOnly: boolean }> => {
  const found: Array<{ spec: string; line: number; typeOnly: boolean }> = []
  for (const match of source.matchAll(IMPORT)) {
    const spec = match[2] ?? match[3] ?? match[4]
    if (spec === undefined) continue
    const at = match.index + match[0].search(/import|export/)
    const typeOnly = match[1] !== undefined && TYPE_ONLY.test(match[1].trim())
    found.push({ spec, line: source.slice(0, at).split("\n").length, typeOnly })
  }
  return found
}

/** Every (specifier, line) imported by a TypeScript/JavaScript source text. */
export const importsOf = (source: string): Array<{ readonly spec: string; readonly line: number }> =>
  importKindsOf(source).map(({ line, spec }) => ({ spec, line }))

const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/

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
        for (const { line, spec, typeOnly } of importKindsOf(source)) {
          const message = violation(relFile, spec, typeOnly)
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
  // rule 3's pending value imports: an entry whose file is here but no longer makes that import goes from the list
  for (const { file, spec } of typeOnlyPending) {
    const full = path.join(root, file)
    if (!fs.existsSync(full)) continue
    if (!importKindsOf(fs.readFileSync(full, "utf8")).some((i) => i.spec === spec && !i.typeOnly)) {
      problems.push(
        `${file}: no longer imports "${spec}" by value; remove it from typeOnlyPending in ` +
          `tools/dependency-rule/rule.js (rule 3)`
      )
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
