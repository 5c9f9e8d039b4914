// The webhook admin commands as an operator runs them (a separate process, JSON on stdout, one line on stderr and
// exit 1 on bad input), against their own database through DATABASE_URL.
import { assert, describe, it } from "@effect/vitest"
import { adminProcess } from "../support/AdminProcess.ts"

const { run } = adminProcess("svc_admin_hooks")

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>

describe("admin webhooks", () => {
  it("creates secrets, sets the org's webhook and an agent's, and lists deliveries", async () => {
    const orgId = String(json((await run("create-org", "--name", "Hooks")).stdout)["org_id"])
    const first = await run("create-webhook-secret", "--org", orgId)
    assert.strictEqual(first.status, 0, first.stderr)
    const secret = String(json(first.stdout)["webhook_secret"])
    assert.match(secret, /^whsec_[\w-]{43}$/)
    const second = String(
      json((await run("create-webhook-secret", "--org", orgId, "--grace-hours", "1")).stdout)[
        "webhook_secret"
      ]
    )
    assert.notStrictEqual(second, secret)

    assert.deepStrictEqual(json((await run("set-webhook", "--org", orgId, "--url", "https://h.example/a")).stdout), {
      webhook_url: "https://h.example/a",
      webhook_events: ["call_started", "call_ended", "call_analyzed"]
    })
    assert.deepStrictEqual(
      json(
        (await run(
          "set-webhook",
          "--org",
          orgId,
          "--url",
          "https://h.example/b",
          "--events",
          "call_ended, call_started"
        ))
          .stdout
      ),
      { webhook_url: "https://h.example/b", webhook_events: ["call_ended", "call_started"] }
    )
    const agent = await run("add-agent", "--org", orgId, "--agent-id", "a1", "--webhook-url", "https://agent.example")
    assert.strictEqual(agent.status, 0, agent.stderr)
    assert.deepStrictEqual(json(agent.stdout), {
      org_id: orgId,
      agent_id: "a1",
      version: 0,
      webhook_url: "https://agent.example"
    })
    const listed = await run("webhook-deliveries", "--org", orgId)
    assert.strictEqual(listed.status, 0, listed.stderr)
    assert.deepStrictEqual(json(listed.stdout), { deliveries: [] })
  }, 60_000)

  it("refuses bad input with one line on stderr and exit 1", async () => {
    const orgId = String(json((await run("create-org", "--name", "Bad")).stdout)["org_id"])
    const cases: Array<[Array<string>, string]> = [
      [["create-webhook-secret", "--org", "org_missing"], "admin: no org org_missing\n"],
      [["set-webhook", "--org", orgId, "--url", "ftp://x"], "must use http or https"],
      [
        ["set-webhook", "--org", orgId, "--url", "https://x.example", "--events", "call_ended,call_done"],
        "\"call_done\""
      ],
      [["set-webhook", "--org", orgId, "--url", "not a url"], "is not an absolute URL"],
      [["add-agent", "--org", orgId, "--agent-id", "a", "--webhook-url", "https://u:p@x.example"], "credentials"],
      [["create-webhook-secret", "--org", orgId, "--grace-hours", "-1"], "--grace-hours must be 0 or more"]
    ]
    for (const [args, message] of cases) {
      const result = await run(...args)
      assert.strictEqual(result.status, 1, args.join(" "))
      assert.strictEqual(result.stdout, "")
      assert.include(result.stderr, message)
    }
  }, 90_000)
})
