// The two start-up forms of svc-test (decision 0705) must be one program: the bundle that `npm run build` makes and
// the TypeScript sources give the same output and exit code for the same command line, and the bin runs the bundle
// exactly while no workspace file it was made of has changed since. (Nx builds dist/ before this package's tests.)
import { afterAll, assert, describe, it } from "@effect/vitest"
import { referenceServer } from "@svc/agent-test/test-support/Servers.ts"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")
const dist = path.join(root, "dist")
const bundle = path.join(dist, "svc-test.mjs")
const examples = path.resolve(root, "../../examples/custom-llm/tests.yaml")

const forms = {
  sources: [path.join(root, "src", "svcTest", "main.ts")],
  bundle: [bundle],
  bin: [path.join(root, "bin", "svc-test.mjs")]
} as const

const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-startup-"))
fs.writeFileSync(
  path.join(work, "failing.json"),
  JSON.stringify([{
    name: "promises a refund",
    user_turns: ["I want a refund"],
    assertions: [{ type: "contains", value: "refund approved", turn: 1 }]
  }])
)
fs.writeFileSync(path.join(work, "invalid.yaml"), "name: x\nuser_turns: []\nassertions: []\n")
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

/**
 * A run's status, stdout and stderr; the JSON and JUnit reports carry each test's duration, which differs between any
 * two runs, so only that number is masked.
 */
const run = (form: keyof typeof forms, args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [...forms[form], ...args], { cwd: work, encoding: "utf8" })
  const masked = result.stdout.replace(/"duration_ms": \d+/g, "\"duration_ms\": N").replace(
    /time="[\d.]+"/g,
    "time=\"N\""
  )
  return { status: result.status, stdout: masked, stderr: result.stderr }
}

describe("svc-test start-up forms", () => {
  it("the build lists the workspace files the bundle is made of, svc-test's sources and the runner among them", () => {
    const inputs = (JSON.parse(fs.readFileSync(path.join(dist, "svc-test.inputs.json"), "utf8")) as Array<string>)
      .map((input) => path.relative(path.resolve(root, "../.."), path.resolve(dist, input)))
    for (
      const file of [
        "apps/lint/src/svcTest/main.ts",
        "apps/lint/src/svcTest/SvcTest.ts",
        "packages/agent-test/src/Runner.ts",
        "packages/domain/src/batchTests/TestCaseDefinition.ts"
      ]
    ) {
      assert.include(inputs, file)
    }
    assert.isFalse(inputs.some((input) => input.includes("node_modules")), "npm packages are Nx's inputs, not these")
  })

  it.live(
    "same output and exit code from the sources, the bundle and the bin, for each outcome and format",
    () =>
      Effect.gen(function*() {
        const url = yield* referenceServer
        const commandLines: ReadonlyArray<readonly [ReadonlyArray<string>, number]> = [
          [[], 2],
          [["--url", url, "--format", "xml", "failing.json"], 2],
          [["--url", url, "invalid.yaml"], 2],
          [["--url", url, "missing.yaml"], 2],
          [["--url", url, examples], 0],
          [["--url", url, "failing.json"], 1],
          [["--url", url, "--format", "json", "failing.json", examples], 1],
          [["--url", url, "--format", "junit", "failing.json"], 1],
          [["--url", url, "--format", "sarif", "failing.json"], 1]
        ]
        for (const [args, status] of commandLines) {
          const sources = run("sources", args)
          assert.strictEqual(sources.status, status, `svc-test ${args.join(" ")}: ${sources.stderr}`)
          assert.deepStrictEqual(run("bundle", args), sources, `bundle: svc-test ${args.join(" ")}`)
          assert.deepStrictEqual(run("bin", args), sources, `bin: svc-test ${args.join(" ")}`)
        }
      }).pipe(Effect.scoped),
    120_000
  )

  it("the bin runs the bundle while it is current and the sources once a file it was made of is newer", () => {
    // A copy of the bin, a marker bundle and a one-file inputs list in a scratch tree: which one ran is what it prints.
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-bin-"))
    fs.mkdirSync(path.join(tree, "bin"))
    fs.mkdirSync(path.join(tree, "dist"))
    fs.mkdirSync(path.join(tree, "src", "svcTest"), { recursive: true })
    fs.copyFileSync(forms.bin[0], path.join(tree, "bin", "svc-test.mjs"))
    const source = path.join(tree, "src", "svcTest", "main.ts")
    fs.writeFileSync(source, "process.stdout.write(\"sources\")\n")
    fs.writeFileSync(path.join(tree, "dist", "svc-test.inputs.json"), JSON.stringify(["../src/svcTest/main.ts"]))
    const marker = path.join(tree, "dist", "svc-test.mjs")
    fs.writeFileSync(marker, "process.stdout.write(\"bundle\")\n")
    const ran = (env: Record<string, string> = {}) =>
      spawnSync(process.execPath, [path.join(tree, "bin", "svc-test.mjs")], {
        encoding: "utf8",
        env: { ...process.env, ...env }
      }).stdout
    const at = (file: string, seconds: number) => fs.utimesSync(file, seconds, seconds)
    at(source, 1_000)
    at(marker, 2_000)
    assert.strictEqual(ran(), "bundle")
    assert.strictEqual(ran({ SVC_TEST_NO_BUNDLE: "1" }), "sources")
    at(source, 3_000)
    assert.strictEqual(ran(), "sources", "a source newer than the bundle")
    at(marker, 3_000)
    fs.rmSync(path.join(tree, "dist", "svc-test.inputs.json"))
    assert.strictEqual(ran(), "sources", "no inputs list: not a build this bin knows")
    fs.rmSync(tree, { recursive: true, force: true })
  })
})
