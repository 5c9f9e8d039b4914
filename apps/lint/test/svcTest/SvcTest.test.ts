import { assert, describe, it } from "@effect/vitest"
import { referenceServer } from "@svc/agent-test/test-support/Servers.ts"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SvcTest from "../../src/svcTest/SvcTest.ts"

// svc-test (issue 32 item 5) against the reference server: exit 0 when all pass, 1 on a failure, 2 when the run
// itself cannot happen; text, JSON, JUnit and SARIF reports.

const examples = path.resolve(import.meta.dirname, "../../../../examples/custom-llm/tests.yaml")
const bin = path.resolve(import.meta.dirname, "../../bin/svc-test.mjs")

const tempFile = (name: string, text: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-"))
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

const failing = () =>
  tempFile(
    "failing.json",
    JSON.stringify([{
      name: "promises a refund",
      user_turns: ["I want a refund"],
      assertions: [{ type: "contains", value: "refund approved", turn: 1 }]
    }])
  )

describe("svc-test", () => {
  it.live("exits 0 with every example passing (the bin, as CI runs it)", () =>
    Effect.gen(function*() {
      const url = yield* referenceServer
      // the server is another process: a synchronous spawn blocks only this test
      const child = spawnSync(process.execPath, [bin, "--url", url, examples], { encoding: "utf8" })
      assert.strictEqual(child.status, 0, child.stdout)
      assert.include(child.stdout, "2 tests: 2 passed, 0 failed, 0 errored")
    }).pipe(Effect.scoped), 30_000)

  it.live("exits 1 on a failing test, naming the failed assertion in every format", () =>
    Effect.gen(function*() {
      const url = yield* referenceServer
      const file = failing()
      const text = yield* SvcTest.run(["--url", url, file])
      assert.strictEqual(text.code, 1)
      assert.include(text.out, "FAIL")
      assert.include(text.out, "assertions[0] contains \"refund approved\" (turn 1) failed")
      const json = JSON.parse((yield* SvcTest.run(["--url", url, "--format", "json", file])).out)
      assert.deepStrictEqual([json.total, json.pass, json.fail, json.error], [1, 0, 1, 0])
      const junit = (yield* SvcTest.run(["--url", url, "--format", "junit", file])).out
      assert.match(junit, /<testsuites tests="1" failures="1" errors="0">/)
      assert.include(junit, "<failure message=\"assertions[0] contains &quot;refund approved&quot;")
      const sarif = JSON.parse((yield* SvcTest.run(["--url", url, "--format", "sarif", file])).out)
      assert.strictEqual(sarif.version, "2.1.0")
      assert.strictEqual(sarif.runs[0].results[0].ruleId, "test-failed")
    }).pipe(Effect.scoped), 30_000)

  it.effect("exits 2 when the run itself cannot happen: usage, unreadable or invalid files", () =>
    Effect.gen(function*() {
      const noFiles = yield* SvcTest.run(["--url", "ws://127.0.0.1:1"])
      assert.strictEqual(noFiles.code, 2)
      assert.include(noFiles.err, "no test files given")
      const invalid = tempFile("bad.yaml", "name: x\nuser_turns: []\nassertions: []\n")
      const bad = yield* SvcTest.run(["--url", "ws://127.0.0.1:1", invalid])
      assert.strictEqual(bad.code, 2)
      assert.include(bad.err, "test 0: user_turns must be at least one user turn")
      const noUrl = yield* SvcTest.run([examples])
      assert.strictEqual(noUrl.code, 2)
      assert.include(noUrl.err, "no --url given")
    }))

  it.live(
    "a test that ends in a protocol error exits 1 (the agent is broken, not the run)",
    () =>
      Effect.gen(function*() {
        // nothing listens on port 1: 3 connection attempts, then the test ends error
        const result = yield* SvcTest.run(["--url", "ws://127.0.0.1:1", "--format", "json", examples])
        assert.strictEqual(result.code, 1)
        const json = JSON.parse(result.out)
        assert.strictEqual(json.error, 2)
        assert.include(json.tests[0].explanation, "after 3 attempts")
      }),
    30_000
  )
})
