import { assert, layer } from "@effect/vitest"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsBody } from "@svc/domain/models/ListContacts.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as ContactSeed from "../../src/contacts/ContactSeed.ts"
import * as ContactsQuery from "../../src/contacts/ContactsQuery.ts"
import * as TestDatabase from "../../test-support/TestDatabase.ts"

// Query plans on a table large enough that a sequential scan or a sort would show: 100,000 contacts in
// one org and 40,000 over 40 others (issue 4: "each query's plan checked with EXPLAIN"). Every
// statement is explained the way the repository runs it: unprepared, so planned for its values.

const BIG = OrgId.make("org-big")
const request = Schema.decodeUnknownSync(ListContactsBody)

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Relation Name"?: string
  readonly "Index Cond"?: string
  readonly "Scan Direction"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

const planNodes = (rows: ReadonlyArray<{ "QUERY PLAN": unknown }>) => {
  const raw = rows[0]!["QUERY PLAN"]
  const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>
  return nodesOf(plan[0]!.Plan)
}

/** The plan the repository gets: an unprepared statement, planned for its parameter values. */
const explain = (statement: ContactsQuery.SqlText) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql.unsafe<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params).unprepared
        .pipe(
          Effect.orDie,
          Effect.map(planNodes)
        )
  )

const literal = (value: unknown): string =>
  typeof value === "number" ? String(value) : `'${String(value).replaceAll("'", "''")}'`

/** The plan a prepared statement settles on after five runs: the generic one. */
const explainGeneric = (statement: ContactsQuery.SqlText) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
      yield* sql.unsafe(`PREPARE contacts_plan AS ${statement.text}`).unprepared
      const rows = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(
        `EXPLAIN (FORMAT JSON) EXECUTE contacts_plan(${statement.params.map(literal).join(", ")})`
      ).unprepared
      yield* sql.unsafe("DEALLOCATE contacts_plan").unprepared
      return planNodes(rows)
    })).pipe(Effect.orDie))

const describePlan = (nodes: ReadonlyArray<PlanNode>) =>
  nodes.map((n) => `${n["Node Type"]}${n["Index Name"] ? ` on ${n["Index Name"]}` : ""}`).join(" > ")

const scansOf = (nodes: ReadonlyArray<PlanNode>, index: string) => nodes.filter((n) => n["Index Name"] === index)

const assertNoSeqScanOfContacts = (nodes: ReadonlyArray<PlanNode>) =>
  assert.isFalse(
    nodes.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "contacts"),
    describePlan(nodes)
  )

/** A page walked straight off the order index: no sort of the matches, no scan of the org. */
const assertOrderIndexPage = (nodes: ReadonlyArray<PlanNode>, direction: "Forward" | "Backward") => {
  const scans = scansOf(nodes, "contacts_org_order")
  assert.strictEqual(scans.length, 1, describePlan(nodes))
  assert.strictEqual(scans[0]!["Node Type"], "Index Scan", describePlan(nodes))
  assert.strictEqual(scans[0]!["Scan Direction"], direction)
  assert.isFalse(nodes.some((n) => n["Node Type"] === "Sort"), describePlan(nodes))
  assertNoSeqScanOfContacts(nodes)
}

const assertBitmapOn = (nodes: ReadonlyArray<PlanNode>, index: string) => {
  assert.isTrue(scansOf(nodes, index).some((n) => n["Node Type"] === "Bitmap Index Scan"), describePlan(nodes))
  assertNoSeqScanOfContacts(nodes)
}

/** A search total answered from the search copy alone: its trigram index, its heap, nothing of contacts. */
const assertCopyCount = (nodes: ReadonlyArray<PlanNode>) => {
  assert.isTrue(
    scansOf(nodes, "contact_search_trgm").some((n) => n["Node Type"] === "Bitmap Index Scan"),
    describePlan(nodes)
  )
  assert.isFalse(nodes.some((n) => n["Relation Name"] === "contacts"), describePlan(nodes))
  assert.isFalse(nodes.some((n) => (n["Index Name"] ?? "").startsWith("contacts_")), describePlan(nodes))
}

const setUp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const plans = [{ orgId: BIG, contacts: 100_000 }]
  for (let i = 0; i < 40; i++) plans.push({ orgId: OrgId.make(`org-small-${i}`), contacts: 1_000 })
  for (const plan of plans) {
    yield* sql`INSERT INTO orgs (org_id, name, created_timestamp) VALUES (${plan.orgId}, ${plan.orgId}, 0)`
  }
  const result = yield* ContactSeed.load(plans, { now: 1_750_000_000_000 })
  return result
})

layer(TestDatabase.layer, { timeout: 300_000 })("contacts query plans on 140,000 contacts", (it) => {
  it.effect(
    "the seed rebuilt every index and constraint of the migration and counted every org",
    () =>
      Effect.gen(function*() {
        const result = yield* setUp
        assert.isTrue(result.rebuiltIndexes)
        assert.strictEqual(result.inserted.reduce((sum, p) => sum + p.contacts, 0), 140_000)
        const sql = yield* SqlClient.SqlClient
        const indexes = yield* sql<{ indexname: string }>`
        SELECT indexname FROM pg_indexes WHERE tablename = 'contacts' ORDER BY indexname`
        assert.deepStrictEqual(indexes.map((i) => i.indexname), [
          "contacts_custom_fields",
          "contacts_do_not_call",
          "contacts_org_order",
          "contacts_org_phone_key",
          "contacts_pkey",
          "contacts_search_trgm"
        ])
        const copyIndexes = yield* sql<{ indexname: string }>`
        SELECT indexname FROM pg_indexes WHERE tablename = 'contact_search' ORDER BY indexname`
        assert.deepStrictEqual(copyIndexes.map((i) => i.indexname), ["contact_search_pkey", "contact_search_trgm"])
        // the search copy (migration 0027) holds every contact's current text once, and nothing else
        const copy = yield* sql<{ missing: bigint; extra: bigint }>`
        SELECT
          (SELECT count(*) FROM (SELECT org_id, contact_id, search_text FROM contacts
            EXCEPT ALL SELECT org_id, contact_id, search_text FROM contact_search) m) AS missing,
          (SELECT count(*) FROM (SELECT org_id, contact_id, search_text FROM contact_search
            EXCEPT ALL SELECT org_id, contact_id, search_text FROM contacts) e) AS extra`
        assert.deepStrictEqual([Number(copy[0]!.missing), Number(copy[0]!.extra)], [0, 0])
        const counts = yield* sql<{ wrong: bigint }>`
        SELECT count(*) AS wrong FROM contact_counts c
        WHERE c.contacts <> (SELECT count(*) FROM contacts WHERE org_id = c.org_id)`
        assert.strictEqual(Number(counts[0]!.wrong), 0)
      }),
    300_000
  ) // the seed of 140,000 contacts runs in this test: ~10 s idle, over 30 s on a loaded machine

  it.effect("the dispatcher's do-not-call check reads the org's do-not-call index, for a known org or a new one", () =>
    Effect.gen(function*() {
      // the per-task check of DispatchRepo.claim (scheduler_claim, migration 0010); without migration 0008
      // PostgreSQL read all of the org's contacts through contacts_org_order for it
      const check = (orgId: string): ContactsQuery.SqlText => ({
        text: `SELECT c.n, EXISTS (
            SELECT 1 FROM contacts k WHERE k.org_id = $1 AND k.phone_number = c.n AND k.do_not_call) AS dnc
          FROM unnest($2::text[]) AS c(n)`,
        params: [orgId, "{+14155550100,+14155550101}"],
        custom: true
      })
      for (const orgId of [BIG, "org-not-in-the-statistics"]) {
        for (const nodes of [yield* explain(check(orgId)), yield* explainGeneric(check(orgId))]) {
          assert.isNotEmpty(scansOf(nodes, "contacts_do_not_call"), describePlan(nodes))
          assert.isEmpty(scansOf(nodes, "contacts_org_order"), describePlan(nodes))
          assertNoSeqScanOfContacts(nodes)
        }
      }
    }))

  it.effect("default page: the order index, no sort; the total from the maintained count", () =>
    Effect.gen(function*() {
      const statement = ContactsQuery.pageStatement(BIG, request({ limit: 100 }), { _tag: "First" })
      assert.isFalse(statement.custom, "the unfiltered page may stay prepared")
      for (const nodes of [yield* explain(statement), yield* explainGeneric(statement)]) {
        assertOrderIndexPage(nodes, "Forward")
        assert.isTrue(nodes.some((n) => n["Relation Name"] === "contact_counts"), describePlan(nodes))
      }
      const count = yield* explain(ContactsQuery.orgCountStatement(BIG))
      assert.isFalse(count.some((n) => n["Relation Name"] === "contacts"), describePlan(count))
    }))

  it.effect("keyset page: one index condition on the row comparison, both directions", () =>
    Effect.gen(function*() {
      const after = { _tag: "After" as const, sortValue: 1_700_000_000_000, contactId: "0190" }
      for (const [sortOrder, direction] of [["desc", "Forward"], ["asc", "Backward"]] as const) {
        const statement = ContactsQuery.pageStatement(BIG, request({ limit: 100, sort_order: sortOrder }), after)
        for (const nodes of [yield* explain(statement), yield* explainGeneric(statement)]) {
          assertOrderIndexPage(nodes, direction)
          const condition = scansOf(nodes, "contacts_org_order")[0]!["Index Cond"] ?? ""
          assert.match(condition, /ROW\(COALESCE\(last_conversation_timestamp, '?0'?(::bigint)?\), contact_id\) [<>]/)
        }
      }
    }))

  it.effect("selective search: the trigram index for the page and for the count", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // seven digits of one contact's number: a handful of matches among 140,000
      const rows = yield* sql<{ phone_number: string }>`
        SELECT phone_number FROM contacts WHERE org_id = ${BIG} ORDER BY contact_id LIMIT 1 OFFSET 777`
      const digits = rows[0]!.phone_number.slice(-7)
      const body = request({ search_query: digits, limit: 100 })
      const page = ContactsQuery.pageStatement(BIG, body, { _tag: "First" })
      assert.isTrue(page.custom)
      assertBitmapOn(yield* explain(page), "contacts_search_trgm")
      assertCopyCount(yield* explain(ContactsQuery.countStatement(BIG, body)))
    }))

  it.effect("broad search total: the copy's trigram index and rows, never a row of contacts (decision 0643)", () =>
    Effect.gen(function*() {
      // "son" is in about one contact in seven of the seed (Johnson, Wilson, Anderson, ...)
      const body = request({ search_query: "son", limit: 100 })
      assertCopyCount(yield* explain(ContactsQuery.countStatement(BIG, body)))
      // the bare count the benchmarks compare with reads contacts
      assertBitmapOn(yield* explain(ContactsQuery.contactsCountStatement(BIG, body)), "contacts_search_trgm")
    }))

  it.effect("a search with another filter is counted on contacts: the copy has no other column", () =>
    Effect.gen(function*() {
      const body = request({
        search_query: "son",
        filter_criteria: { custom_fields: [{ key: "plan", type: "string", value: "enterprise" }] }
      })
      const count = ContactsQuery.countStatement(BIG, body)
      assert.match(count.text, /FROM contacts WHERE/)
      const nodes = yield* explain(count)
      assert.isFalse(nodes.some((n) => n["Relation Name"] === "contact_search"), describePlan(nodes))
    }))

  it.effect("broad search page: walks the order index and stops at the page", () =>
    Effect.gen(function*() {
      const page = ContactsQuery.pageStatement(BIG, request({ search_query: "an", limit: 100 }), { _tag: "First" })
      assertOrderIndexPage(yield* explain(page), "Forward")
    }))

  it.effect("custom-field filter: the jsonb_path_ops index for the page and for the count", () =>
    Effect.gen(function*() {
      const body = request({
        filter_criteria: { custom_fields: [{ key: "company", type: "string", value: "Acme Dental Inc" }] },
        limit: 100
      })
      const page = ContactsQuery.pageStatement(BIG, body, { _tag: "First" })
      assertBitmapOn(yield* explain(page), "contacts_custom_fields")
      assertBitmapOn(yield* explain(ContactsQuery.countStatement(BIG, body)), "contacts_custom_fields")
      const either = request({
        filter_criteria: {
          custom_fields: [{ key: "company", type: "enum", value: ["Acme Dental Inc", "Apex Labs Co"] }]
        }
      })
      assertBitmapOn(yield* explain(ContactsQuery.countStatement(BIG, either)), "contacts_custom_fields")
    }))

  it.effect("a phone number filter uses the org's phone key", () =>
    Effect.gen(function*() {
      const body = request({ filter_criteria: { phone_number: { type: "string", value: "+15125550123" } } })
      const nodes = yield* explain(ContactsQuery.countStatement(BIG, body))
      assert.isAbove(scansOf(nodes, "contacts_org_phone_key").length, 0, describePlan(nodes))
    }))
})
