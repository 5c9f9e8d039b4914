// The pre-dial admin commands (decision 0553) as an operator runs them: a separate process, JSON on stdout, one line
// on stderr and exit 1 on bad input, against their own database through DATABASE_URL.
import { assert, describe, it } from "@effect/vitest"
import { adminProcess } from "../support/AdminProcess.ts"

const { run } = adminProcess("svc_admin_predial")

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>

describe("admin pre-dial webhook", () => {
  it("sets the org's check once it has a webhook secret, with a default or given timeout, and clears it", async () => {
    const orgId = String(json((await run("create-org", "--name", "Predial")).stdout)["org_id"])
    const early = await run("set-predial-webhook", "--org", orgId, "--url", "https://check.example/predial")
    assert.strictEqual(early.status, 1)
    assert.strictEqual(early.stdout, "")
    assert.include(early.stderr, "has no webhook secret")
    assert.strictEqual((await run("create-webhook-secret", "--org", orgId)).status, 0)

    const set = await run("set-predial-webhook", "--org", orgId, "--url", "https://check.example/predial")
    assert.strictEqual(set.status, 0, set.stderr)
    assert.deepStrictEqual(json(set.stdout), { predial_webhook_url: "https://check.example/predial", timeout_ms: 3000 })
    const again = await run("set-predial-webhook", "--org", orgId, "--url", "https://b.example/", "--timeout-ms", "750")
    assert.deepStrictEqual(json(again.stdout), { predial_webhook_url: "https://b.example/", timeout_ms: 750 })

    assert.deepStrictEqual(json((await run("clear-predial-webhook", "--org", orgId)).stdout), { cleared: true })
    assert.deepStrictEqual(json((await run("clear-predial-webhook", "--org", orgId)).stdout), { cleared: false })
  }, 90_000)

  it("refuses bad input with one line on stderr and exit 1", async () => {
    const orgId = String(json((await run("create-org", "--name", "Bad")).stdout)["org_id"])
    assert.strictEqual((await run("create-webhook-secret", "--org", orgId)).status, 0)
    const cases: Array<[Array<string>, string]> = [
      [["set-predial-webhook", "--org", "org_missing", "--url", "https://x.example"], "no org org_missing"],
      [["set-predial-webhook", "--org", orgId, "--url", "ftp://x"], "must use http or https"],
      [["set-predial-webhook", "--org", orgId, "--url", "https://u:p@x.example"], "credentials"],
      [
        ["set-predial-webhook", "--org", orgId, "--url", "https://x.example", "--timeout-ms", "50"],
        "from 100 to 10000"
      ],
      [
        ["set-predial-webhook", "--org", orgId, "--url", "https://x.example", "--timeout-ms", "20000"],
        "from 100 to 10000"
      ]
    ]
    for (const [args, message] of cases) {
      const result = await run(...args)
      assert.strictEqual(result.status, 1, args.join(" "))
      assert.strictEqual(result.stdout, "")
      assert.include(result.stderr, message)
    }
  }, 90_000)
})
