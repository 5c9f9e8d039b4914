// `admin import --kind contacts` in process against a real PostgreSQL (issue 13, part 5): history and ids kept,
// unknown fields and values the store cannot keep refused with their line, all or nothing across chunks, and the
// index rebuild of a large load. The CLI wiring (exit codes, stderr) is in admin.integration.test.ts.
import { assert, describe, it, layer } from "@effect/vitest"
import { ContactId, OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsBody } from "@svc/domain/models/ListContacts.ts"
import { makeCursorCodec } from "@svc/domain/Pagination.ts"
import { ContactsRepo } from "@svc/store/contacts/ContactsRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Importer } from "../../src/admin/Import.ts"
import * as Progress from "../../src/admin/Progress.ts"

const ORG_HISTORY = OrgId.make("org-history")

const Keys = Layer.succeed(CursorKeys, makeCursorCodec({ secret: "contact import test secret, 32 bytes" }))
const TestLayer = Layer.mergeAll(Importer.layer, ContactsRepo.layer.pipe(Layer.provide(Keys))).pipe(
  Layer.provideMerge(TestDatabase.layer)
)

const T0 = 7_000_000

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-contact-import-"))
let files = 0
const fileOf = (lines: ReadonlyArray<unknown>) => {
  const file = path.join(dir, `contacts-${++files}.jsonl`)
  fs.writeFileSync(file, lines.map((l) => typeof l === "string" ? l : JSON.stringify(l)).join("\n"))
  return file
}

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, ${orgId}, 0)`
  )

const countOf = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: string }>`SELECT count(*)::text AS n FROM contacts WHERE org_id = ${orgId}`.pipe(
        Effect.map((rows) => Number(rows[0]?.n))
      )
  )

const importFile = (orgId: string, file: string, options?: Parameters<Importer["Service"]["importFile"]>[3]) =>
  Effect.flatMap(Importer, (importer) => importer.importFile(OrgId.make(orgId), "contacts", file, options))

const failure = (orgId: string, lines: ReadonlyArray<unknown>) =>
  Effect.map(Effect.flip(importFile(orgId, fileOf(lines))), (error) => error.message)

layer(TestLayer, { timeout: 120_000 })("admin import --kind contacts", (it) => {
  it.effect("keeps history, ids and timestamps as given, and reads them back through the repository", () =>
    Effect.gen(function*() {
      yield* addOrg("org-history")
      yield* TestClock.setTime(T0)
      const file = fileOf([
        {
          contact_id: "crm-export-1",
          org_id: "org-history",
          phone_number: "+14155550101",
          first_name: "Ann",
          tags: ["vip", "vip", "lead"],
          custom_fields: { plan: "pro", seats: 3, trial: false, gone: null },
          conversation_count: 12,
          last_conversation_timestamp: 1_700_000_000_000,
          created_timestamp: 1_600_000_000_000,
          user_modified_timestamp: 1_650_000_000_000,
          do_not_call: true,
          external_id: "ext-1"
        },
        "",
        { phone_number: "+14155550102", contact_tags: ["b"], last_conversation_timestamp: null }
      ])
      const imported = yield* importFile("org-history", file)
      assert.strictEqual(imported, 2)
      const repo = yield* ContactsRepo
      const first = yield* repo.get(ORG_HISTORY, ContactId.make("crm-export-1"))
      assert.deepStrictEqual({ ...first }, {
        contact_id: "crm-export-1",
        org_id: "org-history",
        phone_number: "+14155550101",
        first_name: "Ann",
        external_id: "ext-1",
        do_not_call: true,
        contact_tags: ["vip", "lead"],
        custom_fields: { plan: "pro", seats: 3, trial: false },
        conversation_count: 12,
        last_conversation_timestamp: 1_700_000_000_000,
        created_timestamp: 1_600_000_000_000,
        user_modified_timestamp: 1_650_000_000_000
      } as never)
      const second = yield* repo.getByPhone(ORG_HISTORY, "+14155550102")
      assert.strictEqual(second.conversation_count, 0)
      assert.isUndefined(second.last_conversation_timestamp)
      assert.strictEqual(second.created_timestamp, T0)
      assert.strictEqual(second.user_modified_timestamp, T0)
      assert.deepStrictEqual(second.contact_tags, ["b"])
      assert.match(second.contact_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      // the list order uses the imported history: the contacted one first
      const page = yield* repo.list(ORG_HISTORY, Schema.decodeUnknownSync(ListContactsBody)({ sort_order: "desc" }))
      assert.deepStrictEqual(page.items.map((c) => c.phone_number), ["+14155550101", "+14155550102"])
    }))

  it.effect("refuses an unknown field, naming the line and the field, and imports nothing", () =>
    Effect.gen(function*() {
      yield* addOrg("org-unknown")
      const message = yield* failure("org-unknown", [
        { phone_number: "+14155550201" },
        { phone_number: "+14155550202", conversations: 3 }
      ])
      assert.match(message, /^nothing imported: line 2: /)
      assert.include(message, "conversations")
      assert.strictEqual(yield* countOf("org-unknown"), 0)
    }))

  it.effect("refuses every value the store cannot keep, each with its line, and lists them all", () =>
    Effect.gen(function*() {
      yield* addOrg("org-bad")
      const message = yield* failure("org-bad", [
        { phone_number: "+14155550301", conversation_count: 2_147_483_648 },
        { phone_number: "+14155550302", contact_id: "x".repeat(101) },
        { phone_number: "+14155550303", tags: ["a\u001fb"] },
        { phone_number: "+14155550304", first_name: "nul\u0000" },
        { phone_number: "+14155550305", org_id: "org-other" },
        { phone_number: "+14155550306", contact_id: "tab\there" },
        { phone_number: "+14155550307", custom_fields: { "k\u0000": "v" } },
        { phone_number: "+14155550308", conversation_count: -1 },
        { phone_number: "+14155550309", last_conversation_timestamp: 1.5 },
        { phone_number: "555-0310" },
        "[1, 2]",
        "{not json",
        { phone_number: "+14155550313", tags: ["a"], contact_tags: ["b"] }
      ])
      for (let line = 1; line <= 13; line++) assert.include(message, `line ${line}: `)
      assert.include(message, "line 1: conversation_count")
      assert.include(message, "line 2: contact_id must be at most 100 characters")
      assert.include(message, "line 3: tags[0] must not contain U+001F")
      assert.include(message, "line 4: first_name must not contain U+0000")
      assert.include(message, "line 5: org_id \"org-other\" is not the org imported into (org-bad)")
      assert.include(message, "line 6: contact_id must not contain control characters")
      assert.include(message, "line 12: not valid JSON")
      assert.strictEqual(yield* countOf("org-bad"), 0)
    }))

  it.effect("names both lines of a number or contact id given twice, and lists at most 20 problems", () =>
    Effect.gen(function*() {
      yield* addOrg("org-dupes")
      const message = yield* failure("org-dupes", [
        { phone_number: "+14155550401", contact_id: "a" },
        { phone_number: "+14155550402", contact_id: "a" },
        { phone_number: "+14155550401" }
      ])
      assert.include(message, "line 2: contact_id a is also on line 1")
      assert.include(message, "line 3: phone_number +14155550401 is also on line 1")
      const many = yield* failure("org-dupes", Array.from({ length: 25 }, () => ({ phone_number: "bad" })))
      assert.include(many, "line 20: ")
      assert.notInclude(many, "line 21: ")
      assert.match(many, /; and 5 more$/)
    }))

  it.effect("is all or nothing across chunks: a number the org has, on the third chunk, leaves nothing behind", () =>
    Effect.gen(function*() {
      yield* addOrg("org-atomic")
      yield* importFile("org-atomic", fileOf([{ phone_number: "+14155559999", contact_id: "old" }]))
      const lines = Array.from({ length: 25 }, (_, i) => ({ phone_number: `+1415555${String(1000 + i)}` }))
      lines[22] = { phone_number: "+14155559999" }
      const error = yield* Effect.flip(importFile("org-atomic", fileOf(lines), { chunkSize: 10 }))
      assert.strictEqual(
        error.message,
        "nothing imported: line 23: phone_number +14155559999 already belongs to contact old of the org"
      )
      const idTaken = yield* Effect.flip(
        importFile("org-atomic", fileOf([{ phone_number: "+14155558888", contact_id: "old" }]), { chunkSize: 10 })
      )
      assert.include(idTaken.message, "line 1: contact_id old already belongs to the org's contact with +14155559999")
      assert.strictEqual(yield* countOf("org-atomic"), 1)
      // and a bad line in a later chunk, after earlier chunks went in, rolls them back too
      const late = [...lines.slice(0, 22), { phone_number: "+1415555x" }]
      const bad = yield* Effect.flip(importFile("org-atomic", fileOf(late), { chunkSize: 10 }))
      assert.include(bad.message, "line 23: phone_number")
      assert.strictEqual(yield* countOf("org-atomic"), 1)
      const ok = yield* importFile("org-atomic", fileOf(lines.slice(0, 22)), { chunkSize: 10 })
      assert.strictEqual(ok, 22)
      assert.strictEqual(yield* countOf("org-atomic"), 23)
    }))

  it.effect("a large load into an empty org rebuilds the indexes and the phone key, and keeps them working", () =>
    Effect.gen(function*() {
      yield* addOrg("org-large")
      const lines = Array.from({ length: 3000 }, (_, i) => ({
        phone_number: `+1212${String(1_000_000 + i)}`,
        first_name: `Name${i}`,
        conversation_count: i % 5,
        last_conversation_timestamp: i % 5 === 0 ? null : 1_000_000 + i
      }))
      const seen: Array<Progress.Progress> = []
      const imported = yield* importFile("org-large", fileOf(lines), {
        chunkSize: 500,
        rebuildAtLeast: 1000,
        onProgress: (p) => seen.push(p)
      })
      assert.strictEqual(imported, 3000)
      assert.isTrue(seen.some((p) => p.phase === "index"))
      assert.deepStrictEqual(seen.filter((p) => p.phase === "load").at(-1), { phase: "load", done: 3000, total: 3000 })
      const sql = yield* SqlClient.SqlClient
      const indexes = yield* sql<{ indexname: string }>`
        SELECT indexname FROM pg_indexes WHERE tablename = 'contacts' ORDER BY indexname`
      assert.deepStrictEqual(indexes.map((r) => r.indexname), [
        "contacts_custom_fields",
        "contacts_do_not_call",
        "contacts_org_order",
        "contacts_org_phone_key",
        "contacts_pkey",
        "contacts_search_trgm"
      ])
      // and the search copy's trigram index (migration 0027), with a row for every imported contact
      const copy = yield* sql<{ indexname: string; rows: bigint }>`
        SELECT indexname, (SELECT count(*) FROM contact_search WHERE org_id = 'org-large') AS rows
        FROM pg_indexes WHERE tablename = 'contact_search' ORDER BY indexname`
      assert.deepStrictEqual(copy.map((r) => [r.indexname, Number(r.rows)]), [
        ["contact_search_pkey", 3000],
        ["contact_search_trgm", 3000]
      ])
      // the rebuilt phone key refuses a second contact with an imported number
      const again = yield* Effect.flip(importFile("org-large", fileOf([{ phone_number: "+12121000007" }])))
      assert.include(again.message, "line 1: phone_number +12121000007 already belongs to contact")
    }))

  it.effect("an empty file imports nothing; a missing file and an unknown org are errors", () =>
    Effect.gen(function*() {
      yield* addOrg("org-empty")
      assert.strictEqual(yield* importFile("org-empty", fileOf(["", "  "])), 0)
      const missing = yield* Effect.flip(importFile("org-empty", path.join(dir, "nope.jsonl")))
      assert.include(missing.message, "cannot read")
      const noOrg = yield* Effect.flip(importFile("org-missing", fileOf([{ phone_number: "+14155550001" }])))
      assert.strictEqual(noOrg.message, "no org org-missing")
    }))
})

describe("Progress.reporter", () => {
  const capture = (isTTY: boolean) => {
    const out: Array<string> = []
    let t = 0
    const report = Progress.reporter("import contacts", {
      stream: { isTTY, write: (text) => out.push(text) },
      now: () => (t += 50)
    })
    return { out, report }
  }

  it("prints plain lines at every 10% off a terminal, never a carriage return", () => {
    const { out, report } = capture(false)
    for (let done = 0; done <= 1000; done += 1) report({ phase: "load", done, total: 1000 })
    report({ phase: "index", done: 0, total: 4 })
    report({ phase: "index", done: 4, total: 4 })
    assert.strictEqual(out.length, 13)
    assert.strictEqual(out[0], "import contacts load 0/1000 0%\n")
    assert.strictEqual(out[10], "import contacts load 1000/1000 100%\n")
    assert.strictEqual(out[12], "import contacts index 4/4 100%\n")
    assert.isFalse(out.join("").includes("\r"))
  })

  it("redraws one line on a terminal at most every 100 ms, ending each phase with a newline", () => {
    const { out, report } = capture(true)
    for (let done = 0; done <= 10; done++) report({ phase: "load", done, total: 10 })
    report({ phase: "index", done: 1, total: 1 })
    const text = out.join("")
    assert.isTrue(text.startsWith("\rimport contacts load    [....."))
    assert.include(text, "10/10 100%\n")
    assert.include(text, "\rimport contacts index   [#########################] 1/1 100%\n")
    // 50 ms per call: about every other update is drawn
    assert.isBelow(out.filter((s) => s.startsWith("\r")).length, 9)
  })
})
