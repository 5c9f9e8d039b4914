import { assert, describe, it, layer } from "@effect/vitest"
import { Contact } from "@svc/domain/models/Contact.ts"
import { CreateContactRequest, UpdateContactRequest } from "@svc/domain/models/ContactInput.ts"
import { E164 } from "@svc/domain/models/E164.ts"
import { ContactId, OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsBody } from "@svc/domain/models/ListContacts.ts"
import { makeCursorCodec } from "@svc/domain/Pagination.ts"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as ContactSeed from "../../src/contacts/ContactSeed.ts"
import * as ContactsQuery from "../../src/contacts/ContactsQuery.ts"
import { ContactsRepo, toContact } from "../../src/contacts/ContactsRepo.ts"
import { CursorKeys } from "../../src/db/CursorKeys.ts"
import * as SqlErrorMessage from "../../src/db/SqlErrorMessage.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

const ORG_CREATE = OrgId.make("org-create")
const ORG_DUP_A = OrgId.make("org-dup-a")
const ORG_FOREIGN = OrgId.make("org-foreign")
const ORG_OWN = OrgId.make("org-own")
const ORG_UPDATE = OrgId.make("org-update")
const ORG_DELETE = OrgId.make("org-delete")
const ORG_UNSTORABLE = OrgId.make("org-unstorable")
const ORG_COUNT_A = OrgId.make("org-count-a")
const ORG_UPSERT = OrgId.make("org-upsert")

const Keys = Layer.succeed(CursorKeys, makeCursorCodec({ secret: "contacts test secret, thirty-two bytes+" }))
const TestLayer = ContactsRepo.layer.pipe(Layer.provideMerge(Keys), Layer.provideMerge(TestDatabase.layer))

const create = Schema.decodeUnknownSync(CreateContactRequest)
const update = Schema.decodeUnknownSync(UpdateContactRequest)
const listRequest = Schema.decodeUnknownSync(ListContactsBody)

// Near the epoch: with a database pool in the test, TestClock.setTime to a present-day instant does not
// return (the test clock runs every timer that falls due on the way).
const T0 = 5_000_000
const SEED_NOW = 1_750_000_000_000

const addOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${orgId}, ${orgId}, 0)`
  )

const storedCount = (orgId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: bigint | null; live: bigint }>`
      SELECT (SELECT contacts FROM contact_counts WHERE org_id = ${orgId}) AS n,
             (SELECT count(*) FROM contacts WHERE org_id = ${orgId}) AS live`.pipe(
      Effect.map((rows) => ({ maintained: Number(rows[0]?.n ?? 0), live: Number(rows[0]?.live ?? 0) }))
    ))

layer(TestLayer)("ContactsRepo", (it) => {
  it.effect("creates a contact in the vendor's shape with timestamps from the clock", () =>
    Effect.gen(function*() {
      yield* addOrg("org-create")
      yield* TestClock.setTime(T0)
      const repo = yield* ContactsRepo
      const contact = yield* repo.create(
        ORG_CREATE,
        create({
          phone_number: "+14155550100",
          first_name: "Zoë",
          tags: ["vip", "lead", "vip"],
          custom_fields: { plan: "pro", seats: 3, trial: false, cleared: null }
        })
      )
      assert.match(contact.contact_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.strictEqual(contact.org_id, "org-create")
      assert.strictEqual(contact.phone_number, "+14155550100")
      assert.strictEqual(contact.first_name, "Zoë")
      assert.isFalse("last_name" in contact)
      assert.isFalse("external_id" in contact)
      assert.isFalse("last_conversation_timestamp" in contact)
      assert.strictEqual(contact.do_not_call, false)
      assert.deepStrictEqual(contact.contact_tags, ["vip", "lead"])
      assert.deepStrictEqual(contact.custom_fields, { plan: "pro", seats: 3, trial: false })
      assert.strictEqual(contact.conversation_count, 0)
      assert.strictEqual(contact.created_timestamp, T0)
      assert.strictEqual(contact.user_modified_timestamp, T0)
      assert.deepStrictEqual(yield* repo.get(ORG_CREATE, contact.contact_id), contact)
      assert.deepStrictEqual(yield* repo.getByPhone(ORG_CREATE, "+14155550100"), contact)
    }))

  it.effect("accepts the spec's contact_tags as well as the vendor's tags", () =>
    Effect.gen(function*() {
      yield* addOrg("org-tags")
      const repo = yield* ContactsRepo
      const contact = yield* repo.create(
        OrgId.make("org-tags"),
        create({ phone_number: "+14155550101", contact_tags: ["customer"] })
      )
      assert.deepStrictEqual(contact.contact_tags, ["customer"])
    }))

  it.effect("refuses a second contact with the same number in an org, not in another org", () =>
    Effect.gen(function*() {
      yield* addOrg("org-dup-a")
      yield* addOrg("org-dup-b")
      const repo = yield* ContactsRepo
      yield* repo.create(ORG_DUP_A, create({ phone_number: "+14155550102" }))
      const error = yield* Effect.flip(repo.create(ORG_DUP_A, create({ phone_number: "+14155550102" })))
      assert.isTrue(error._tag === "DuplicatePhoneNumber")
      if (error._tag !== "DuplicatePhoneNumber") return
      assert.strictEqual(error.phone_number, "+14155550102")
      assert.include(error.message, "+14155550102")
      const other = yield* repo.create(OrgId.make("org-dup-b"), create({ phone_number: "+14155550102" }))
      assert.strictEqual(other.org_id, "org-dup-b")
      assert.deepStrictEqual(yield* storedCount("org-dup-a"), { maintained: 1, live: 1 })
    }))

  it.effect("never reads, changes or deletes another org's contact, whatever id is sent", () =>
    Effect.gen(function*() {
      yield* addOrg("org-own")
      yield* addOrg("org-foreign")
      const repo = yield* ContactsRepo
      const theirs = yield* repo.create(ORG_FOREIGN, create({ phone_number: "+14155550103", first_name: "Kept" }))
      const id = theirs.contact_id
      assert.strictEqual((yield* Effect.flip(repo.get(ORG_OWN, id)))._tag, "ContactNotFound")
      assert.strictEqual((yield* Effect.flip(repo.getByPhone(ORG_OWN, "+14155550103")))._tag, "ContactNotFound")
      const updated = yield* Effect.flip(repo.update(ORG_OWN, id, update({ first_name: "Changed" })))
      assert.isTrue(updated._tag === "ContactNotFound")
      if (updated._tag !== "ContactNotFound") return
      assert.strictEqual(updated.contact_id, id)
      assert.strictEqual((yield* Effect.flip(repo.delete(ORG_OWN, id)))._tag, "ContactNotFound")
      assert.strictEqual((yield* repo.get(ORG_FOREIGN, id)).first_name, "Kept")
    }))

  it.effect("updates only the fields sent: tags replaced, custom fields merged, null clears one", () =>
    Effect.gen(function*() {
      yield* addOrg("org-update")
      yield* TestClock.setTime(T0)
      const repo = yield* ContactsRepo
      const created = yield* repo.create(
        ORG_UPDATE,
        create({
          phone_number: "+14155550104",
          first_name: "Ann",
          last_name: "Lee",
          external_id: "crm-1",
          tags: ["a", "b"],
          custom_fields: { plan: "free", city: "Oslo", seats: 1 }
        })
      )
      yield* TestClock.setTime(T0 + 5_000)
      const updated = yield* repo.update(
        ORG_UPDATE,
        created.contact_id,
        update({ last_name: "Lindqvist", do_not_call: true, tags: ["c"], custom_fields: { plan: "pro", city: null } })
      )
      assert.strictEqual(updated.first_name, "Ann")
      assert.strictEqual(updated.last_name, "Lindqvist")
      assert.strictEqual(updated.external_id, "crm-1")
      assert.strictEqual(updated.do_not_call, true)
      assert.deepStrictEqual(updated.contact_tags, ["c"])
      assert.deepStrictEqual(updated.custom_fields, { plan: "pro", seats: 1 })
      assert.strictEqual(updated.created_timestamp, T0)
      assert.strictEqual(updated.user_modified_timestamp, T0 + 5_000)
      assert.strictEqual(updated.phone_number, "+14155550104")
      const search = yield* repo.list(ORG_UPDATE, listRequest({ search_query: "lindqvist" }))
      assert.strictEqual(search.total, 1, "the search text follows the update")
      const stale = yield* repo.list(ORG_UPDATE, listRequest({ search_query: "oslo" }))
      assert.strictEqual(stale.total, 0, "a cleared field is no longer searchable")
    }))

  it.effect("deletes a contact once; the number is free again", () =>
    Effect.gen(function*() {
      yield* addOrg("org-delete")
      const repo = yield* ContactsRepo
      const contact = yield* repo.create(ORG_DELETE, create({ phone_number: "+14155550105" }))
      yield* repo.delete(ORG_DELETE, contact.contact_id)
      const again = yield* Effect.flip(repo.delete(ORG_DELETE, contact.contact_id))
      assert.strictEqual(again._tag, "ContactNotFound")
      assert.strictEqual((yield* Effect.flip(repo.get(ORG_DELETE, contact.contact_id)))._tag, "ContactNotFound")
      yield* repo.create(ORG_DELETE, create({ phone_number: "+14155550105" }))
      assert.strictEqual(yield* repo.count(ORG_DELETE), 1)
    }))

  it.effect("text PostgreSQL cannot store is UnstorableText naming the field, on create and update", () =>
    Effect.gen(function*() {
      yield* addOrg("org-unstorable")
      const repo = yield* ContactsRepo
      const nul = yield* Effect.flip(
        repo.create(ORG_UNSTORABLE, create({ phone_number: "+14155550109", first_name: "a\u0000b" }))
      )
      assert.deepStrictEqual([nul._tag, nul._tag === "UnstorableText" ? nul.field : ""], [
        "UnstorableText",
        "first_name"
      ])
      const key = yield* Effect.flip(
        repo.create(ORG_UNSTORABLE, create({ phone_number: "+14155550109", custom_fields: { "\ud800": "x" } }))
      )
      assert.deepStrictEqual([key._tag, key._tag === "UnstorableText" ? key.field : ""], [
        "UnstorableText",
        "custom_fields"
      ])
      const contact = yield* repo.create(ORG_UNSTORABLE, create({ phone_number: "+14155550109" }))
      const tag = yield* Effect.flip(
        repo.update(ORG_UNSTORABLE, contact.contact_id, update({ tags: ["ok", "\udc00"] }))
      )
      assert.deepStrictEqual([tag._tag, tag._tag === "UnstorableText" ? tag.field : ""], ["UnstorableText", "tags[1]"])
      assert.include(tag.message, "tags[1]")
      assert.strictEqual(yield* repo.count(ORG_UNSTORABLE), 1)
    }))

  it.effect("an unknown id is ContactNotFound naming the id", () =>
    Effect.gen(function*() {
      yield* addOrg("org-missing")
      const repo = yield* ContactsRepo
      const error = yield* Effect.flip(repo.get(OrgId.make("org-missing"), ContactId.make("no-such-id")))
      assert.strictEqual(error._tag, "ContactNotFound")
      assert.strictEqual(error.message, "contact no-such-id not found")
    }))
})

layer(TestLayer)("contacts table invariants", (it) => {
  it.effect("the maintained count follows single, bulk, conflicting and deleting writes", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ContactsRepo
      yield* addOrg("org-count-a")
      yield* addOrg("org-count-b")
      assert.strictEqual(yield* repo.count(ORG_COUNT_A), 0)
      yield* ContactSeed.load([{ orgId: "org-count-a", contacts: 120 }, { orgId: "org-count-b", contacts: 30 }], {
        chunkSize: 50,
        now: SEED_NOW
      })
      assert.deepStrictEqual(yield* storedCount("org-count-a"), { maintained: 120, live: 120 })
      assert.deepStrictEqual(yield* storedCount("org-count-b"), { maintained: 30, live: 30 })
      yield* repo.create(ORG_COUNT_A, create({ phone_number: "+19995550000" }))
      yield* Effect.flip(repo.create(ORG_COUNT_A, create({ phone_number: "+19995550000" })))
      assert.deepStrictEqual(yield* storedCount("org-count-a"), { maintained: 121, live: 121 })
      yield* sql`DELETE FROM contacts WHERE org_id = ${"org-count-a"} AND do_not_call = false`
      const afterDelete = yield* storedCount("org-count-a")
      assert.strictEqual(afterDelete.maintained, afterDelete.live)
      yield* sql`DELETE FROM orgs WHERE org_id = ${"org-count-b"}`
      assert.deepStrictEqual(yield* storedCount("org-count-b"), { maintained: 0, live: 0 })
      assert.strictEqual(yield* repo.count(ORG_COUNT_A), afterDelete.live)
    }))

  it.effect("truncating orgs leaves no contact and no count behind", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* addOrg("org-truncate")
      yield* ContactSeed.load([{ orgId: "org-truncate", contacts: 10 }], { now: SEED_NOW })
      yield* sql`TRUNCATE orgs CASCADE`
      const rows = yield* sql<{ contacts: bigint; counts: bigint }>`
        SELECT (SELECT count(*) FROM contacts) AS contacts, (SELECT count(*) FROM contact_counts) AS counts`
      assert.deepStrictEqual([Number(rows[0]!.contacts), Number(rows[0]!.counts)], [0, 0])
    }))

  it.effect("the count ignores a conflicting insert that updates instead (the scheduler's call feed)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ContactsRepo
      yield* addOrg("org-upsert")
      yield* repo.create(ORG_UPSERT, create({ phone_number: "+14155550110" }))
      const upsert = (id: string, phone: string) =>
        sql`INSERT INTO contacts AS k (org_id, contact_id, phone_number, conversation_count,
              last_conversation_timestamp, created_timestamp, user_modified_timestamp)
            VALUES ('org-upsert', ${id}, ${phone}, 1, 123, 0, 0)
            ON CONFLICT (org_id, phone_number) DO UPDATE
              SET conversation_count = k.conversation_count + 1,
                  last_conversation_timestamp = EXCLUDED.last_conversation_timestamp`
      yield* upsert("upsert-1", "+14155550110")
      yield* upsert("upsert-2", "+14155550111")
      assert.deepStrictEqual(yield* storedCount("org-upsert"), { maintained: 2, live: 2 })
      const fed = yield* repo.getByPhone(ORG_UPSERT, "+14155550111")
      assert.strictEqual(fed.conversation_count, 1)
      const found = yield* repo.list(ORG_UPSERT, listRequest({ search_query: "550111" }))
      assert.strictEqual(found.total, 1, "a contact the call feed created is searchable")
    }))

  it.effect("a second seed of an org adds new contacts instead of colliding with the first", () =>
    Effect.gen(function*() {
      yield* addOrg("org-reseed")
      const first = yield* ContactSeed.load([{ orgId: "org-reseed", contacts: 40 }], { seed: 7 })
      const second = yield* ContactSeed.load([{ orgId: "org-reseed", contacts: 40 }], { seed: 7 })
      assert.deepStrictEqual(first.inserted, [{ orgId: "org-reseed", contacts: 40 }])
      assert.deepStrictEqual(second.inserted, [{ orgId: "org-reseed", contacts: 40 }])
      assert.deepStrictEqual(yield* storedCount("org-reseed"), { maintained: 80, live: 80 })
    }))

  it.effect("a contact of an unknown org is refused", () =>
    Effect.gen(function*() {
      const repo = yield* ContactsRepo
      const exit = yield* Effect.exit(repo.create(OrgId.make("org-nobody"), create({ phone_number: "+14155550106" })))
      assert.isTrue(exit._tag === "Failure")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM contacts WHERE org_id = 'org-nobody'`
      assert.strictEqual(Number(rows[0]?.n), 0)
    }))

  it.effect("a contact cannot move to another org", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ContactsRepo
      yield* addOrg("org-move-a")
      yield* addOrg("org-move-b")
      const contact = yield* repo.create(OrgId.make("org-move-a"), create({ phone_number: "+14155550107" }))
      const error = yield* Effect.flip(
        sql`UPDATE contacts SET org_id = 'org-move-b' WHERE contact_id = ${contact.contact_id}`
      )
      assert.include(SqlErrorMessage.describe(error), "cannot move")
    }))

  it.effect("the stored search text is the same from the trigger, the bulk path and any update", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ContactsRepo
      yield* addOrg("org-text")
      yield* ContactSeed.load([{ orgId: "org-text", contacts: 200 }], { now: SEED_NOW })
      yield* repo.create(
        OrgId.make("org-text"),
        create({
          phone_number: "+14155550108",
          first_name: "ÅSA",
          last_name: "O'Brien",
          external_id: "X_1",
          custom_fields: { note: "50% off", n: 1.5, b: true }
        })
      )
      yield* sql`UPDATE contacts SET search_text = 'forged' WHERE org_id = 'org-text' AND external_id = 'X_1'`
      const expected = ContactsQuery.searchTextExpression({
        phoneNumber: "phone_number",
        firstName: "first_name",
        lastName: "last_name",
        externalId: "external_id",
        customFields: "custom_fields"
      })
      const rows = yield* sql.unsafe<{ differing: bigint; total: bigint }>(
        `SELECT count(*) FILTER (WHERE search_text IS DISTINCT FROM ${expected}) AS differing, count(*) AS total
         FROM contacts WHERE org_id = 'org-text'`
      )
      assert.strictEqual(Number(rows[0]?.total), 201)
      assert.strictEqual(Number(rows[0]?.differing), 0)
      const text = yield* sql<{ search_text: string }>`
        SELECT search_text FROM contacts WHERE org_id = 'org-text' AND external_id = 'X_1'`
      const fields = text[0]!.search_text.split("\u001f")
      assert.deepStrictEqual(fields.slice(0, 4), ["+14155550108", "åsa", "o'brien", "x_1"])
      assert.sameMembers(fields.slice(4), ["true", "1.5", "50% off"])
    }))
})

describe("toContact", () => {
  it("builds the same Contact the class constructor builds, field order included", () => {
    const row = {
      contact_id: ContactId.make("0190a0b0-1111-7000-8000-000000000001"),
      org_id: OrgId.make("org-a"),
      phone_number: E164.make("+14155550123"),
      created_timestamp: 1_700_000_000_000n,
      first_name: "Ann",
      last_name: null,
      do_not_call: false,
      external_id: "crm_1",
      contact_tags: ["vip"],
      custom_fields: { plan: "pro", ltv: 12.5 },
      conversation_count: 3,
      last_conversation_timestamp: 1_710_000_000_000n,
      user_modified_timestamp: 1_700_000_000_001n
    }
    const built = toContact(row)
    const expected = new Contact({
      contact_id: row.contact_id,
      org_id: row.org_id,
      phone_number: row.phone_number,
      created_timestamp: 1_700_000_000_000,
      first_name: "Ann",
      do_not_call: false,
      external_id: "crm_1",
      contact_tags: ["vip"],
      custom_fields: { plan: "pro", ltv: 12.5 },
      conversation_count: 3,
      last_conversation_timestamp: 1_710_000_000_000,
      user_modified_timestamp: 1_700_000_000_001
    })
    assert.deepStrictEqual(built, expected)
    assert.instanceOf(built, Contact)
    assert.isTrue(Schema.is(Contact)(built))
    assert.deepStrictEqual(Object.keys(built), Object.keys(expected))
    assert.strictEqual(JSON.stringify(Schema.encodeSync(Contact)(built)), JSON.stringify(expected))
  })
})

describe("ContactSeed.generate", () => {
  const now = SEED_NOW
  it.effect("is deterministic and independent of the chunking", () =>
    Effect.sync(() => {
      const whole = ContactSeed.generate("org-x", { seed: 3, start: 0, count: 500, now })
      const parts = ContactSeed.generate("org-x", { seed: 3, start: 0, count: 200, now })
      ContactSeed.generate("org-x", { seed: 3, start: 200, count: 300, now }, parts)
      assert.deepStrictEqual(parts, whole)
      const other = ContactSeed.generate("org-x", { seed: 4, start: 0, count: 500, now })
      assert.notDeepEqual(other.phoneNumber, whole.phoneNumber)
    }))

  it.effect("makes realistic contacts: E.164, distinct numbers, 30% never contacted, 3-5 fields, 0-3 tags", () =>
    Effect.sync(() => {
      const c = ContactSeed.generate("org-y", { seed: 1, start: 0, count: 20_000, now })
      assert.isTrue(c.phoneNumber.every((p) => /^\+1\d{10}$/.test(p)))
      assert.strictEqual(new Set(c.phoneNumber).size, 20_000)
      assert.strictEqual(new Set(c.contactId).size, 20_000)
      assert.deepStrictEqual([...c.contactId].sort(), c.contactId, "ids grow with the index")
      const never = c.lastConversationTimestamp.filter((t) => t === null).length / 20_000
      assert.isTrue(never > 0.27 && never < 0.33, `never contacted: ${never}`)
      assert.isTrue(c.conversationCount.every((n, i) => (n === 0) === (c.lastConversationTimestamp[i] === null)))
      assert.isTrue(c.customFields.every((f) => Object.keys(f).length >= 3 && Object.keys(f).length <= 5))
      assert.isTrue(c.customFields.every((f) => typeof f["plan"] === "string"))
      const tagCounts = c.tags.map((t) => (t === "" ? 0 : t.split("\u001f").length))
      assert.isTrue(tagCounts.every((n) => n >= 0 && n <= 3))
      const external = c.externalId.filter((e) => e !== null).length / 20_000
      assert.isTrue(external > 0.57 && external < 0.63, `external ids: ${external}`)
      assert.isTrue(c.firstName.some((n) => n !== null && /[^\x20-\x7e]/.test(n)), "a few non-ASCII names")
      assert.isTrue(
        c.createdTimestamp.every((t, i) =>
          t < now && c.userModifiedTimestamp[i]! >= t && (c.lastConversationTimestamp[i] ?? t) >= t
        )
      )
    }))
})
