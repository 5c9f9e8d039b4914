import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as path from "node:path"

const bin = path.resolve(import.meta.dirname, "..", "..", "bin", "svc-lint.mjs")
const lint = (...args: Array<string>) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" })

describe("svc-lint rules", () => {
  it("classifies each rule at 00:00 UTC of its date", () => {
    const before = JSON.parse(lint("rules", "--as-of", "2026-07-30", "--json").stdout)
    const on = JSON.parse(lint("rules", "--as-of", "2026-07-31", "--json").stdout)
    const status = (rows: Array<{ id: string; status: string }>, id: string) => rows.find((r) => r.id === id)?.status
    assert.strictEqual(status(before, "list-agents-v1"), "upcoming")
    assert.strictEqual(status(on, "list-agents-v1"), "removed")
    assert.strictEqual(status(on, "agent-language-multi"), "removed")
    assert.strictEqual(on.length, before.length)
    assert.isAtLeast(on.length, 12, "every row of the spec's schedule has a rule")
  })

  it("prints one readable line per rule", () => {
    const result = lint("rules", "--as-of", "2026-11-22")
    assert.strictEqual(result.status, 0)
    assert.match(result.stdout, /^get-agent-versions\s+removed\s+2026-09-15 removed\s+-> /m)
  })

  it("rejects a malformed or impossible date as a usage error (exit code 2) and says the format", () => {
    const result = lint("rules", "--as-of", "2026-8-1")
    assert.strictEqual(result.status, 2)
    assert.include(result.stdout + result.stderr, "Expected a date as YYYY-MM-DD")
    assert.strictEqual(lint("rules", "--as-of", "2026-02-30").status, 2)
  })
})
