// The three start-up forms of svc-lint (docs/decisions/0202) must be one program: the V8 snapshot
// and the bundle that `npm run build` makes, and the TypeScript sources, give the same output and
// exit code for the same command line. (Nx builds dist/ before this package's tests.)
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")
const project = path.join(root, "test", "fixtures", "project")
const blob = path.join(root, "dist", "svc-lint.blob")

const forms = {
  sources: [path.join(root, "src", "bin.ts")],
  bundle: [path.join(root, "dist", "svc-lint.mjs")],
  snapshot: ["--snapshot-blob", blob, "--"]
} as const

const run = (form: keyof typeof forms, args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [...forms[form], ...args], {
    cwd: project,
    encoding: "utf8",
    // FORCE_COLOR as CI's task runner sets it: with NO_COLOR too, Node warns on stderr when a form
    // loads `node:util` up front (it did once: the bundle held the resident linter's import).
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "1", GITHUB_STEP_SUMMARY: "" }
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

const commandLines: ReadonlyArray<ReadonlyArray<string>> = [
  ["--as-of", "2026-11-01", "-f", "json", "."],
  ["--as-of", "2026-11-01", "agents"],
  ["--version"],
  ["rules", "--as-of", "2026-05-01"],
  ["explain", "agent-language-multi"],
  ["--bogus"]
]

describe("svc-lint start-up forms", () => {
  it("the build made a snapshot for this Node, and says which", () => {
    assert.isTrue(fs.existsSync(blob), "dist/svc-lint.blob")
    const info = JSON.parse(fs.readFileSync(path.join(root, "dist", "svc-lint.blob.json"), "utf8"))
    assert.deepStrictEqual(info, { node: process.version })
  })

  for (const args of commandLines) {
    it(`same output and exit code from sources, bundle and snapshot: svc-lint ${args.join(" ")}`, () => {
      const sources = run("sources", args)
      assert.include([0, 1, 2], sources.status)
      assert.deepStrictEqual(run("bundle", args), sources)
      assert.deepStrictEqual(run("snapshot", args), sources)
    })
  }

  it("a usage error exits 2 from the snapshot, with the CLI's message", () => {
    const result = run("snapshot", ["--bogus"])
    assert.strictEqual(result.status, 2)
    assert.include(result.stderr, "Unrecognized flag: --bogus")
  })

  it("the bin runs the snapshot, and the bundle when told not to, with the same result", () => {
    const bin = path.join(root, "bin", "svc-lint.mjs")
    const viaBin = (env: Record<string, string>) => {
      const r = spawnSync(process.execPath, [bin, "--as-of", "2026-11-01", "-f", "json", "."], {
        cwd: project,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1", GITHUB_STEP_SUMMARY: "", ...env }
      })
      return { status: r.status, stdout: r.stdout, stderr: r.stderr }
    }
    const withSnapshot = viaBin({})
    assert.strictEqual(withSnapshot.status, 1, "the fixture project has removed features")
    assert.deepStrictEqual(viaBin({ SVC_LINT_NO_SNAPSHOT: "1" }), withSnapshot)
  })
})
