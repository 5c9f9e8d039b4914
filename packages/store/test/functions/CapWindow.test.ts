import { assert, describe, it } from "@effect/vitest"
import { CAP_WINDOW_MS } from "@svc/domain/compliance/AttemptCaps.ts"
import * as fs from "node:fs"
import * as path from "node:path"

// The caps of ../shared/reference/calling-rules.md count "per 24 h" (FL, OK, MD), rolling. The claim counts attempts in
// SQL (functions/scheduler_claim.sql) and the preview and the domain in TypeScript (CAP_WINDOW_MS): one window, so
// the number the SQL uses must be the domain's (issue 29 item 4).
describe("the attempt-cap window", () => {
  const sql = fs.readFileSync(
    path.join(import.meta.dirname, "..", "..", "src", "functions", "scheduler_claim.sql"),
    "utf8"
  )

  it("is 24 hours in the domain, as the statutes' caps say", () => {
    assert.strictEqual(CAP_WINDOW_MS, 24 * 60 * 60 * 1000)
  })

  it("is the same number wherever the claim adds it to or subtracts it from an attempt time", () => {
    // every `p_now - N`, `p_now + N` and `...] + N` of the cap arithmetic
    const windows = [...sql.matchAll(/(?:p_now|\])\s*[-+]\s*(\d{6,})/g)].map((m) => Number(m[1]))
    assert.isAtLeast(windows.length, 3, "the claim's cap arithmetic was not found")
    for (const ms of windows) assert.strictEqual(ms, CAP_WINDOW_MS)
  })
})
