// The admin CLI as an operator runs it: a separate process, JSON on stdout, one clear line on
// stderr and exit 1 on bad input; here against its own database through DATABASE_URL.
import { assert, describe, it } from "@effect/vitest"
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Effect, Layer, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { adminProcess } from "../support/AdminProcess.ts"

const { databaseUrl, run } = adminProcess("svc_admin")

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>

describe("admin", () => {
  it("creates an org, a key, a number and an agent, printing JSON", async () => {
    const org = await run("create-org", "--name", "Acme", "--concurrency-limit", "5")
    assert.strictEqual(org.status, 0, org.stderr)
    const orgId = String(json(org.stdout)["org_id"])
    assert.match(orgId, /^org_[0-9a-f]{24}$/)
    const key = await run("create-api-key", "--org", orgId)
    assert.match(String(json(key.stdout)["api_key"]), /^svc_[\w-]{43}$/)
    assert.deepStrictEqual(json((await run("add-phone-number", "--org", orgId, "--number", "+14155550100")).stdout), {
      org_id: orgId,
      phone_number: "+14155550100"
    })
    assert.deepStrictEqual(
      json((await run("add-agent", "--org", orgId, "--agent-id", "agent_1", "--version", "2")).stdout),
      {
        org_id: orgId,
        agent_id: "agent_1",
        version: 2
      }
    )
  }, 180_000)

  it("refuses bad input with one line on stderr and exit 1", async () => {
    const noOrg = await run("create-api-key", "--org", "org_missing")
    assert.strictEqual(noOrg.status, 1)
    assert.strictEqual(noOrg.stdout, "")
    assert.include(noOrg.stderr, "admin: no org org_missing\n")
    const org = String(json((await run("create-org", "--name", "B")).stdout)["org_id"])
    const badNumber = await run("add-phone-number", "--org", org, "--number", "555")
    assert.strictEqual(badNumber.status, 1)
    assert.include(badNumber.stderr, "admin: --number must be an E.164 number like +14155550123 (got \"555\")\n")
  }, 180_000)

  it("imports batch tests all or nothing, naming bad lines", async () => {
    const org = String(json((await run("create-org", "--name", "C")).stdout)["org_id"])
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-import-"))
    try {
      const good = {
        test_case_batch_job_id: "job_1",
        status: "in_progress",
        response_engine: { type: "conversation-flow", conversation_flow_id: "flow_1", version: 1 },
        pass_count: 1,
        fail_count: 0,
        error_count: 0,
        total_count: 3,
        creation_timestamp: 10,
        user_modified_timestamp: 11
      }
      const file = path.join(dir, "jobs.jsonl")
      fs.writeFileSync(
        file,
        [JSON.stringify(good), JSON.stringify({ ...good, test_case_batch_job_id: "job_2", pass_count: -1 }), "{oops"]
          .join("\n")
      )
      const bad = await run("import", "--org", org, "--kind", "batch-tests", "--file", file)
      assert.strictEqual(bad.status, 1)
      assert.match(bad.stderr, /nothing imported: line 2: pass_count .*; line 3: not valid JSON/)
      fs.writeFileSync(
        file,
        `${JSON.stringify(good)}\n\n${JSON.stringify({ ...good, test_case_batch_job_id: "job_2" })}\n`
      )
      const ok = await run("import", "--org", org, "--kind", "batch-tests", "--file", file)
      assert.strictEqual(ok.status, 0, ok.stderr)
      assert.deepStrictEqual(json(ok.stdout), { imported: 2 })
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("imports contacts in one transaction: a duplicate number on a later line leaves nothing behind", async () => {
    const org = String(json((await run("create-org", "--name", "E")).stdout)["org_id"])
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-import-"))
    try {
      const file = path.join(dir, "contacts.jsonl")
      const line = (phone: string, name: string) =>
        JSON.stringify({ phone_number: phone, first_name: name, tags: ["import"] })
      fs.writeFileSync(
        file,
        [line("+14155550001", "Ann"), line("+14155550002", "Bo"), line("+14155550001", "Again")].join("\n")
      )
      const bad = await run("import", "--org", org, "--kind", "contacts", "--file", file)
      assert.strictEqual(bad.status, 1)
      assert.include(bad.stderr, "nothing imported: line 3: phone_number +14155550001 is also on line 1")
      fs.writeFileSync(file, [line("+14155550001", "Ann"), line("+14155550002", "Bo")].join("\n"))
      const ok = await run("import", "--org", org, "--kind", "contacts", "--file", file)
      assert.strictEqual(ok.status, 0, ok.stderr)
      assert.deepStrictEqual(json(ok.stdout), { imported: 2 })
      // progress on stderr as plain lines (stderr is a pipe here, not a terminal): no carriage returns
      assert.include(ok.stderr, "import contacts load 2/2 100%\n")
      assert.notInclude(ok.stderr, "\r")
      // the failed attempt stored nothing: importing the same two again now collides on the first
      const again = await run("import", "--org", org, "--kind", "contacts", "--file", file)
      assert.match(again.stderr, /line 1: phone_number \+14155550001 already belongs to contact /)
      // an unknown field is an error naming the line and the field, not dropped
      fs.writeFileSync(file, JSON.stringify({ phone_number: "+14155550003", conversations: 4 }))
      const unknown = await run("import", "--org", org, "--kind", "contacts", "--file", file)
      assert.strictEqual(unknown.status, 1)
      assert.include(unknown.stderr, "nothing imported: line 1: conversations is not a known field")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("seeds synthetic contacts deterministically", async () => {
    const org = String(json((await run("create-org", "--name", "D")).stdout)["org_id"])
    const seeded = await run("seed", "--org", org, "--contacts", "500", "--seed", "7")
    assert.strictEqual(seeded.status, 0, seeded.stderr)
    assert.strictEqual(json(seeded.stdout)["inserted"], 500)
    assert.include(seeded.stderr, "500/500 100%")
  }, 180_000)

  it(
    "prints a batch's status and a dial-time preview as JSON, and refuses an unknown batch or a bad --at",
    async () => {
      const org = String(json((await run("create-org", "--name", "F", "--concurrency-limit", "3")).stdout)["org_id"])
      await run("add-phone-number", "--org", org, "--number", "+14155550100")
      // a batch as the API stores it: 5 tasks, weekdays 09:00-17:00 in New York, one line kept free
      const batchCallId = await Effect.runPromise(
        Effect.gen(function*() {
          const repo = yield* BatchCallsRepo
          const created = yield* repo.create(
            OrgId.make(org),
            "admin-test",
            Schema.decodeUnknownSync(CreateBatchCallRequest)({
              from_number: "+14155550100",
              reserved_concurrency: 1,
              call_time_window: {
                windows: [{ start: 540, end: 1020 }],
                timezone: "America/New_York",
                day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
              },
              tasks: Array.from({ length: 5 }, (_, i) => ({ to_number: `+1212555000${i}` }))
            }),
            { maxTasks: 100, legalGrouper: () => new LegalGrouper() }
          )
          return created.batch_call_id
        }).pipe(
          Effect.provide(
            BatchCallsRepo.layer.pipe(Layer.provide(Database.layerFromUrl(Redacted.make(await databaseUrl))))
          )
        )
      )

      const status = await run("batch-status", "--org", org, "--batch", batchCallId)
      assert.strictEqual(status.status, 0, status.stderr)
      const report = json(status.stdout)
      assert.strictEqual(report["batch_call_id"], batchCallId)
      assert.strictEqual(report["total_task_count"], 5)
      assert.deepInclude(report["tasks"] as object, { pending: 5 })
      assert.deepInclude(report["in_flight"] as object, { batch: 0, org: 0, concurrency_limit: 3, free_slots: 2 })

      // Saturday 2026-05-09 12:00 in New York: the window next opens Monday 09:00 EDT (13:00Z); two free lines,
      // calls of 10 minutes: 2 at 13:00Z, 2 at 13:10Z, 1 at 13:20Z
      const preview = await run(
        "batch-preview",
        "--org",
        org,
        "--batch",
        batchCallId,
        "--at",
        "2026-05-09T16:00:00Z",
        "--call-seconds",
        "600"
      )
      assert.strictEqual(preview.status, 0, preview.stderr)
      const plan = json(preview.stdout)
      assert.strictEqual(plan["to_dial"], 5)
      assert.strictEqual(plan["first_dial_at_iso"], "2026-05-11T13:00:00.000Z")
      assert.strictEqual(plan["last_dial_at_iso"], "2026-05-11T13:20:00.000Z")

      const unknown = await run("batch-status", "--org", org, "--batch", "batch_call_missing")
      assert.strictEqual(unknown.status, 1)
      assert.strictEqual(unknown.stdout, "")
      assert.include(unknown.stderr, `no batch call batch_call_missing in org ${org}`)
      const badAt = await run("batch-preview", "--org", org, "--batch", batchCallId, "--at", "next tuesday")
      assert.strictEqual(badAt.status, 1)
      assert.include(badAt.stderr, "--at must be an ISO 8601 instant or epoch milliseconds (got \"next tuesday\")")
    },
    180_000
  )
})
