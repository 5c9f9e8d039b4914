// `admin import --kind suppressions` in process against a real PostgreSQL (issue 31 item 5, decision 0550): a national
// registry's plain text (one 10-digit US number a line, NANP: area code and exchange begin with 2-9) is stored as
// +1 and the ten digits, CSV and JSON Lines as given; a bad line anywhere aborts the file naming its line and the rule,
// with nothing imported, also when earlier chunks were already inserted; repeats in the file go in once.
import { assert, layer } from "@effect/vitest"
import { OrgId } from "@svc/domain/models/Ids.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Importer, type ImportOptions } from "../../src/admin/Import.ts"
import type { Progress } from "../../src/admin/Progress.ts"
import { csvFields } from "../../src/admin/SuppressionImportFile.ts"

const TestLayer = Importer.layer.pipe(Layer.provideMerge(TestDatabase.layer))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-suppression-import-"))
let files = 0
const fileOf = (ext: string, text: string) => {
  const file = path.join(dir, `list-${++files}${ext}`)
  fs.writeFileSync(file, text)
  return file
}

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, ${orgId}, 0)`
  )

const importFile = (orgId: string, file: string, options?: ImportOptions) =>
  Effect.flatMap(Importer, (importer) => importer.importFile(OrgId.make(orgId), "suppressions", file, options))

const listOf = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ phone_number: string; reason: string | null; source: string; created_timestamp: number }>`
      SELECT phone_number, reason, source, created_timestamp::float8 AS created_timestamp FROM suppressions
      WHERE org_id = ${orgId} ORDER BY phone_number`.pipe(Effect.map((rows) => rows.map((r) => ({ ...r }))))
  )

const NOW = 9_000_000

layer(TestLayer)("admin import --kind suppressions", (it) => {
  it.effect("stores a registry's 10-digit lines as +1 numbers, source national_dnc, the import's time", () =>
    Effect.gen(function*() {
      yield* addOrg("org_s1")
      yield* TestClock.setTime(NOW)
      const progress: Array<Progress> = []
      const imported = yield* importFile(
        "org_s1",
        fileOf(".txt", "2125550001\r\n2125550002\n\n  9725559999 \n2125550001\n"),
        { onProgress: (p) => progress.push(p) }
      )
      assert.strictEqual(imported, 3)
      assert.deepStrictEqual(yield* listOf("org_s1"), [
        { phone_number: "+12125550001", reason: null, source: "national_dnc", created_timestamp: NOW },
        { phone_number: "+12125550002", reason: null, source: "national_dnc", created_timestamp: NOW },
        { phone_number: "+19725559999", reason: null, source: "national_dnc", created_timestamp: NOW }
      ])
      // 4 numbers read (one repeated), reported to the end, then the list written
      assert.deepStrictEqual(progress.slice(-3), [
        { phase: "read", done: 4, total: 4 },
        { phase: "list", done: 0, total: 3 },
        { phase: "list", done: 3, total: 3 }
      ])
    }))

  it.effect("a bad line aborts the whole file naming the line and the rule; chunks already inserted roll back", () =>
    Effect.gen(function*() {
      yield* addOrg("org_s2")
      const lines = Array.from({ length: 50 }, (_, i) => String(2125550100 + i))
      lines.splice(41, 0, "1125550000") // area code beginning with 1: no NANP number
      lines.splice(45, 0, "212555012") // 9 digits
      lines.splice(47, 0, "212-555-0100") // punctuation
      const error = yield* Effect.flip(importFile("org_s2", fileOf(".txt", lines.join("\n")), { chunkSize: 10 }))
      assert.strictEqual(error._tag, "ImportFailed")
      assert.include(error.message, "nothing imported")
      assert.include(error.message, "line 42: \"1125550000\" is not a 10-digit US number")
      assert.include(error.message, "area code and exchange each begin with 2-9")
      assert.include(error.message, "line 46: \"212555012\"")
      assert.include(error.message, "line 48: \"212-555-0100\"")
      assert.deepStrictEqual(yield* listOf("org_s2"), [])
    }))

  it.effect("an exchange beginning with 0 or 1 is no NANP number either", () =>
    Effect.gen(function*() {
      yield* addOrg("org_s3")
      const error = yield* Effect.flip(importFile("org_s3", fileOf(".txt", "2125550001\n2121550001\n")))
      assert.include(error.message, "line 2: \"2121550001\"")
      assert.deepStrictEqual(yield* listOf("org_s3"), [])
    }))

  it.effect("reads CSV with a header, quoted reasons, E.164 or 10-digit numbers; --source names lines", () =>
    Effect.gen(function*() {
      yield* addOrg("org_s4")
      yield* TestClock.setTime(NOW)
      const imported = yield* importFile(
        "org_s4",
        fileOf(
          ".csv",
          "phone_number,reason\r\n+442071234567,\"said \"\"stop\"\", twice\"\r\n3125550123,complaint\r\n+14155550100,\r\n"
        ),
        { source: "crm_export" }
      )
      assert.strictEqual(imported, 3)
      assert.deepStrictEqual(yield* listOf("org_s4"), [
        { phone_number: "+13125550123", reason: "complaint", source: "crm_export", created_timestamp: NOW },
        { phone_number: "+14155550100", reason: null, source: "crm_export", created_timestamp: NOW },
        { phone_number: "+442071234567", reason: "said \"stop\", twice", source: "crm_export", created_timestamp: NOW }
      ])
    }))

  it.effect("refuses a CSV line with a bad number or too many fields, naming each line", () =>
    Effect.gen(function*() {
      yield* addOrg("org_s5")
      const error = yield* Effect.flip(
        importFile("org_s5", fileOf(".csv", "+14155550100,a\n415-555-0101,b\n+14155550102,c,d\n\"open,x\n"))
      )
      assert.include(error.message, "line 2: phone_number \"415-555-0101\" must be an E.164 number")
      assert.include(error.message, "line 3: 3 fields")
      assert.include(error.message, "line 4: a quoted field is not closed")
      assert.deepStrictEqual(yield* listOf("org_s5"), [])
    }))

  it.effect("reads JSON Lines in create-suppression's shape; a line's source wins, unknown fields are refused", () =>
    Effect.gen(function*() {
      yield* addOrg("org_s6")
      yield* TestClock.setTime(NOW)
      const good = [
        { phone_number: "+14155550100", reason: "opted out by SMS", source: "sms" },
        { phone_number: "+14155550101" }
      ].map((l) => JSON.stringify(l)).join("\n")
      assert.strictEqual(yield* importFile("org_s6", fileOf(".jsonl", good)), 2)
      assert.deepStrictEqual(yield* listOf("org_s6"), [
        { phone_number: "+14155550100", reason: "opted out by SMS", source: "sms", created_timestamp: NOW },
        { phone_number: "+14155550101", reason: null, source: "import", created_timestamp: NOW }
      ])
      const bad = yield* Effect.flip(
        importFile(
          "org_s6",
          fileOf(".jsonl", "{\"phone_number\":\"+14155550102\",\"note\":1}\n{\"phone_number\":\"x\"}")
        )
      )
      assert.include(bad.message, "line 1: ")
      assert.include(bad.message, "note")
      assert.include(bad.message, "line 2: ")
      assert.include(bad.message, "E.164")
      assert.strictEqual((yield* listOf("org_s6")).length, 2)
    }))

  it.effect("keeps a number the org already has as stored, and counts only the new ones", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg("org_s7")
      yield* sql`INSERT INTO suppressions VALUES ('org_s7', '+12125550001', 'asked', 'opt_out', 5)`
      const imported = yield* importFile("org_s7", fileOf(".txt", "2125550001\n2125550002\n"))
      assert.strictEqual(imported, 1)
      assert.deepStrictEqual((yield* listOf("org_s7"))[0], {
        phone_number: "+12125550001",
        reason: "asked",
        source: "opt_out",
        created_timestamp: 5
      })
    }))

  it.effect("refuses a bad --source and an unknown org before reading", () =>
    Effect.gen(function*() {
      yield* addOrg("org_s8")
      const file = fileOf(".txt", "2125550001\n")
      const badSource = yield* Effect.flip(importFile("org_s8", file, { source: "National DNC" }))
      assert.include(badSource.message, "--source must be")
      const noOrg = yield* Effect.flip(importFile("org_none", file))
      assert.include(noOrg.message, "no org org_none")
    }))

  it("splits CSV fields as RFC 4180 does on one line", () => {
    assert.deepStrictEqual(csvFields("a,\"b,c\",\"d\"\"e\""), ["a", "b,c", "d\"e"])
    assert.deepStrictEqual(csvFields(""), [""])
    assert.deepStrictEqual(csvFields("a,"), ["a", ""])
    assert.deepStrictEqual(csvFields("\"a\"x"), { problem: "a quoted field is followed by text other than a comma" })
  })
})
