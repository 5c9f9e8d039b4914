// The calling-policy admin commands as an operator runs them (issue 15, "Legal hours": per-org override, stricter
// always allowed, looser only with an explicit, audited admin flag; decision 0628): a separate process, JSON on
// stdout, one line on stderr and exit 1 on bad input, against their own database through DATABASE_URL.
import { assert, describe, it } from "@effect/vitest"
import { defaultPolicy } from "@svc/domain/compliance/CallingPolicy.ts"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { adminProcess } from "../support/AdminProcess.ts"

const { run } = adminProcess("svc_admin_policy")

type Json = ReturnType<typeof JSON.parse>
const json = (stdout: string) => JSON.parse(stdout) as Json

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "svc-policy-"))
const file = (name: string, content: unknown) => {
  const target = path.join(directory, name)
  fs.writeFileSync(target, typeof content === "string" ? content : JSON.stringify(content))
  return target
}

const fl = defaultPolicy.states.find((r) => r.jurisdiction === "FL")!
const flStricter = { ...fl, hours: [{ ...fl.hours[0]!, start: 540 }] }
const flLooser = { ...fl, hours: [{ ...fl.hours[0]!, end: 1260 }] }

describe("admin calling policy", () => {
  it(
    "sets a stricter override, refuses a looser one without approval, takes it with approval, audits, clears",
    async () => {
      const orgId = String(json((await run("create-org", "--name", "Policy")).stdout)["org_id"])
      const initial = await run("calling-policy", "--org", orgId)
      assert.strictEqual(initial.status, 0, initial.stderr)
      assert.deepInclude(json(initial.stdout), { org_id: orgId, version: 0, override: null, audit: [] })

      const strict = await run(
        "set-calling-policy",
        "--org",
        orgId,
        "--file",
        file("strict.json", { rules: [flStricter] })
      )
      assert.strictEqual(strict.status, 0, strict.stderr)
      assert.strictEqual(json(strict.stdout)["version"], 1)
      assert.deepStrictEqual(
        json(strict.stdout)["policy"].states.find((r: Json) => r.jurisdiction === "FL"),
        flStricter
      )

      const looser = file("loose.json", { rules: [flLooser] })
      const refused = await run("set-calling-policy", "--org", orgId, "--file", looser)
      assert.strictEqual(refused.status, 1)
      assert.strictEqual(refused.stdout, "")
      assert.include(refused.stderr, "override FL allows")
      assert.include(refused.stderr, "allowLooser")
      // nothing changed
      assert.strictEqual(json((await run("calling-policy", "--org", orgId)).stdout)["version"], 1)

      const approved = await run(
        "set-calling-policy",
        "--org",
        orgId,
        "--file",
        looser,
        "--approved-by",
        "counsel@example.com",
        "--reason",
        "ticket 42"
      )
      assert.strictEqual(approved.status, 0, approved.stderr)
      const shown = json((await run("calling-policy", "--org", orgId)).stdout)
      assert.strictEqual(shown["version"], 2)
      assert.deepStrictEqual(shown["override"]["allowLooser"], {
        approvedBy: "counsel@example.com",
        reason: "ticket 42"
      })
      assert.deepStrictEqual(shown["audit"].map((a: Json) => [a.version, a.action, a.approved_by, a.reason]), [
        [2, "set", "counsel@example.com", "ticket 42"],
        [1, "set", null, null]
      ])
      assert.isTrue(shown["audit"][0].loosenings.length > 0)

      const cleared = await run("clear-calling-policy", "--org", orgId)
      assert.strictEqual(cleared.status, 0, cleared.stderr)
      assert.strictEqual(json(cleared.stdout)["version"], 3)
      const after = json((await run("calling-policy", "--org", orgId, "--audit", "1")).stdout)
      assert.deepStrictEqual(after["policy"], defaultPolicy)
      assert.deepStrictEqual(after["audit"].map((a: Json) => a.action), ["clear"])
    },
    120_000
  )

  it("refuses bad input with one line on stderr and exit 1, naming the field", async () => {
    const orgId = String(json((await run("create-org", "--name", "Bad")).stdout)["org_id"])
    const good = file("good.json", { rules: [flStricter] })
    const cases: Array<[Array<string>, string]> = [
      [["set-calling-policy", "--org", "org_missing", "--file", good], "no org org_missing"],
      [["set-calling-policy", "--org", orgId, "--file", path.join(directory, "missing.json")], "cannot read --file"],
      [["set-calling-policy", "--org", orgId, "--file", file("bad.json", "{rules:")], "is not JSON"],
      // the approval cannot come from the file
      [
        [
          "set-calling-policy",
          "--org",
          orgId,
          "--file",
          file("self.json", { rules: [flLooser], allowLooser: { approvedBy: "me", reason: "x" } })
        ],
        "allowLooser"
      ],
      [
        ["set-calling-policy", "--org", orgId, "--file", file("hours.json", { rules: [{ ...fl, hours: [] }] })],
        "hours"
      ],
      [
        [
          "set-calling-policy",
          "--org",
          orgId,
          "--file",
          file("code.json", { rules: [{ ...fl, jurisdiction: "Florida" }] })
        ],
        "jurisdiction"
      ],
      [["set-calling-policy", "--org", orgId, "--file", good, "--approved-by", "me"], "go together"],
      [["calling-policy", "--org", orgId, "--audit", "-1"], "--audit must be 0 or more"],
      [["clear-calling-policy", "--org", "org_missing"], "no org org_missing"]
    ]
    for (const [args, message] of cases) {
      const result = await run(...args)
      assert.strictEqual(result.status, 1, args.join(" "))
      assert.strictEqual(result.stdout, "", args.join(" "))
      assert.include(result.stderr, message, args.join(" "))
    }
    // none of them changed anything
    assert.strictEqual(json((await run("calling-policy", "--org", orgId)).stdout)["version"], 0)
  }, 120_000)
})
