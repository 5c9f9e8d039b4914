/**
 * Synthetic contacts for `seed --org ID --contacts N [--seed S]` and for the benchmarks: a
 * deterministic generator and a bulk loader.
 *
 * Invariants:
 * - contact `i` of an org depends only on (seed, org id, i, the clock's now): the same arguments give
 *   the same contacts whatever the chunk size, and a second seed of the same org continues at the
 *   org's current contact count, so it adds new contacts instead of colliding with the first ones;
 * - phone numbers are distinct within a seed of an org (an affine bijection of the index onto 30
 *   area codes x 10^7 numbers); a number an org already has is skipped (`ON CONFLICT DO NOTHING`),
 *   so the one-contact-per-number rule holds and the result says how many were inserted;
 * - the data looks like an org's CRM export: names drawn head-heavy from ~120 first and ~120 last
 *   names (a few non-ASCII), E.164 numbers, external ids for 60%, 0-3 tags, 3-5 custom fields
 *   (`plan` always), 30% never contacted (postgres-floor.md, Data);
 * - the load is one transaction: all of it or none. Rows go in with one `INSERT ... SELECT FROM
 *   unnest(...)` per chunk, `search_text` computed set-wise by the trigger's expression; when the
 *   load is large against the table, the secondary indexes are dropped first and rebuilt after,
 *   which is several times faster than maintaining a trigram index row by row
 *   (docs/decisions/0301-contacts-storage.md).
 */
import { PgTypes } from "@effect/sql-pg"
import { fnv1a } from "@svc/domain/Fnv1a.ts"
import { Clock, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import * as ContactsQuery from "./ContactsQuery.ts"
import { mix32, Rng } from "./SeedRandom.ts"
import {
  AREA_CODES,
  fieldValue,
  FIRST_NAMES,
  LAST_NAMES,
  LOCAL_MULTIPLIER,
  NUMBER_SPACE,
  NUMBERS_PER_AREA,
  OPTIONAL_FIELDS,
  PHONE_MULTIPLIERS,
  planOf,
  TAGS
} from "./SeedVocabulary.ts"

const DAY = 86_400_000
const HISTORY = 3 * 365 * DAY

// ---------------------------------------------------------------------------------------------
// Generator

/**
 * Contacts in columns, as the loader binds them (one array parameter per column).
 *
 * @category models
 */
export interface ContactColumns {
  readonly orgId: Array<string>
  readonly contactId: Array<string>
  readonly phoneNumber: Array<string>
  readonly firstName: Array<string | null>
  readonly lastName: Array<string | null>
  readonly externalId: Array<string | null>
  readonly doNotCall: Array<boolean>
  /** Tags joined by U+001F (array parameters cannot nest); "" for none. */
  readonly tags: Array<string>
  readonly customFields: Array<Record<string, string | number | boolean>>
  readonly conversationCount: Array<number>
  readonly lastConversationTimestamp: Array<number | null>
  readonly createdTimestamp: Array<number>
  readonly userModifiedTimestamp: Array<number>
}

/**
 * Empty columns to append contacts to.
 *
 * @category constructors
 */
export const emptyColumns = (): ContactColumns => ({
  orgId: [],
  contactId: [],
  phoneNumber: [],
  firstName: [],
  lastName: [],
  externalId: [],
  doNotCall: [],
  tags: [],
  customFields: [],
  conversationCount: [],
  lastConversationTimestamp: [],
  createdTimestamp: [],
  userModifiedTimestamp: []
})

const HEX_BYTES = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"))

const hex8 = (value: number): string => {
  const v = value >>> 0
  return HEX_BYTES[v >>> 24]! + HEX_BYTES[(v >>> 16) & 0xff]! + HEX_BYTES[(v >>> 8) & 0xff]! + HEX_BYTES[v & 0xff]!
}

/**
 * A UUID in the version 7 layout (RFC 9562 §5.7): `millis` in the first 48 bits, then `counter` in
 * the 42 bits after the version and variant (§6.2, method 1), then 32 random bits. Ids of one
 * `millis` increase with the counter, so a seed appends to the primary key instead of splitting
 * pages all over it.
 *
 * @category constructors
 */
export const uuidV7 = (millis: number, counter: number, random: number): string => {
  const time = Math.max(0, Math.floor(millis)).toString(16).padStart(12, "0").slice(-12)
  const high = Math.floor(counter / 0x40000000) & 0xfff
  const low = counter % 0x40000000
  const tail = hex8(0x80000000 + low)
  return `${time.slice(0, 8)}-${time.slice(8)}-7${high.toString(16).padStart(3, "0")}-${tail.slice(0, 4)}-` +
    `${tail.slice(4)}${hex8(random * 0x100000000)}`
}

/**
 * Options of {@link generate}.
 *
 * @category models
 */
export interface GenerateOptions {
  readonly seed: number
  /** Index of the first contact: the org's contact count before this seed. */
  readonly start: number
  readonly count: number
  /** The clock's now in ms: every timestamp lies in the three years before it. */
  readonly now: number
}

/**
 * Contacts `start .. start + count - 1` of `orgId` for `seed`, appended to `into` (or new columns).
 *
 * @category constructors
 */
export const generate = (orgId: string, options: GenerateOptions, into?: ContactColumns): ContactColumns => {
  const out = into ?? emptyColumns()
  const orgSeed = mix32(fnv1a(orgId) ^ mix32(options.seed))
  const multiplier = PHONE_MULTIPLIERS[orgSeed % PHONE_MULTIPLIERS.length]!
  const offset = mix32(orgSeed + 1) % NUMBER_SPACE
  for (let i = options.start; i < options.start + options.count; i++) {
    const rng = new Rng(mix32(orgSeed ^ mix32(i + 0x9e3779b9)))
    // Two bijections: index -> slot, then slot -> (area, local number) with the local part scrambled,
    // so neighbouring contacts do not get neighbouring numbers.
    const slot = (multiplier * i + offset) % NUMBER_SPACE
    const area = AREA_CODES[slot % AREA_CODES.length]!
    const local = String((Math.floor(slot / AREA_CODES.length) * LOCAL_MULTIPLIER + offset) % NUMBERS_PER_AREA)
      .padStart(7, "0")
    const created = Math.max(0, options.now - DAY - rng.int(HISTORY))
    const contacted = rng.next() >= 0.3
    const span = Math.max(0, options.now - created)
    const last = contacted ? created + rng.int(span) : null
    const conversations = contacted ? 1 + Math.floor(40 * rng.next() ** 3) : 0
    const modified = created + rng.int(span)
    const fields: Record<string, string | number> = { plan: planOf(rng.next()) }
    const extra = 2 + rng.int(3)
    const offsetField = rng.int(OPTIONAL_FIELDS.length)
    for (let f = 0; f < extra; f++) {
      const name = OPTIONAL_FIELDS[(offsetField + f) % OPTIONAL_FIELDS.length]!
      fields[name] = fieldValue(name, rng)
    }
    const tagCount = rng.int(4)
    const tags: Array<string> = []
    for (let t = 0; t < tagCount; t++) {
      const tag = rng.pickSkewed(TAGS)
      if (!tags.includes(tag)) tags.push(tag)
    }
    out.orgId.push(orgId)
    out.contactId.push(uuidV7(options.now, i, rng.next()))
    out.phoneNumber.push(`+1${area}${local}`)
    out.firstName.push(rng.next() < 0.97 ? rng.pickSkewed(FIRST_NAMES) : null)
    out.lastName.push(rng.next() < 0.93 ? rng.pickSkewed(LAST_NAMES) : null)
    out.externalId.push(rng.next() < 0.6 ? `crm_${hex8(rng.next() * 0x100000000)}` : null)
    out.doNotCall.push(rng.next() < 0.03)
    out.tags.push(tags.join("\u001f"))
    out.customFields.push(fields)
    out.conversationCount.push(conversations)
    out.lastConversationTimestamp.push(last)
    out.createdTimestamp.push(created)
    out.userModifiedTimestamp.push(modified)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Loader

/**
 * How many contacts to add to which org.
 *
 * @category models
 */
export interface SeedPlan {
  readonly orgId: string
  readonly contacts: number
}

/**
 * Where a load is: `load` counts generated-and-inserted contacts, `index` counts rebuilt indexes.
 *
 * @category models
 */
export interface SeedProgress {
  readonly phase: "load" | "index" | "analyze"
  readonly done: number
  readonly total: number
}

/**
 * Options of {@link load}.
 *
 * @category models
 */
export interface LoadOptions {
  /** Default 1. */
  readonly seed?: number
  /** The instant the contacts' timestamps lead up to; default the clock's now. */
  readonly now?: number
  /** Contacts per INSERT statement; default 20,000. */
  readonly chunkSize?: number
  /**
   * Drop the secondary indexes and rebuild them after the load: `"auto"` (default) does when the
   * load has at least 100,000 contacts and at least as many as the table already holds.
   */
  readonly rebuildIndexes?: boolean | "auto"
  readonly onProgress?: (progress: SeedProgress) => void
}

/**
 * What a load did.
 *
 * @category models
 */
export interface SeedResult {
  /**
   * Contacts inserted per org, in order of first appearance in the plans (fewer than planned when an
   * org already had some of the numbers).
   */
  readonly inserted: ReadonlyArray<SeedPlan>
  readonly rebuiltIndexes: boolean
  readonly millis: number
}

/**
 * Secondary indexes of contacts and of its search copy (migrations 0003, 0008, 0027) that a large load drops and
 * rebuilds, by name and definition (the seed and `admin import --kind contacts`).
 *
 * @category models
 */
export const SECONDARY_INDEXES: ReadonlyArray<readonly [name: string, definition: string]> = [
  [
    "contacts_org_order",
    "CREATE INDEX contacts_org_order ON contacts " +
    "(org_id, (coalesce(last_conversation_timestamp, 0)) DESC, contact_id DESC)"
  ],
  [
    "contacts_custom_fields",
    "CREATE INDEX contacts_custom_fields ON contacts USING gin (custom_fields jsonb_path_ops)"
  ],
  ["contacts_search_trgm", "CREATE INDEX contacts_search_trgm ON contacts USING gin (search_text gin_trgm_ops)"],
  [
    "contact_search_trgm",
    "CREATE INDEX contact_search_trgm ON contact_search USING gin (search_text gin_trgm_ops)"
  ],
  [
    "contacts_do_not_call",
    "CREATE INDEX contacts_do_not_call ON contacts (org_id, phone_number) WHERE do_not_call"
  ]
]

/** @category models */
export const PHONE_KEY = "ALTER TABLE contacts ADD CONSTRAINT contacts_org_phone_key UNIQUE (org_id, phone_number)"

/**
 * Builds again the secondary indexes a large load dropped, and the phone key when `phoneKey` (it was dropped too),
 * reporting each as an `index` step: the last step of the seed's and the import's transaction.
 *
 * @category constructors
 */
export const rebuildIndexes = (
  sql: SqlClient.SqlClient,
  phoneKey: boolean,
  progress: (progress: SeedProgress) => void
) =>
  Effect.gen(function*() {
    const steps = SECONDARY_INDEXES.length + (phoneKey ? 1 : 0)
    let built = 0
    progress({ phase: "index", done: built, total: steps })
    if (phoneKey) {
      yield* sql.unsafe(PHONE_KEY)
      progress({ phase: "index", done: ++built, total: steps })
    }
    for (const [, definition] of SECONDARY_INDEXES) {
      yield* sql.unsafe(definition)
      progress({ phase: "index", done: ++built, total: steps })
    }
  })

/**
 * The bulk insert of {@link ContactColumns}: one statement over thirteen array parameters, `search_text` computed
 * set-wise; `skipDuplicates` adds `ON CONFLICT DO NOTHING`.
 *
 * @category constructors
 */
export const insertStatement = (skipDuplicates: boolean) => `
  INSERT INTO contacts (org_id, contact_id, phone_number, first_name, last_name, external_id, do_not_call,
    contact_tags, custom_fields, conversation_count, last_conversation_timestamp, created_timestamp,
    user_modified_timestamp, search_text)
  SELECT r.org_id, r.contact_id, r.phone_number, r.first_name, r.last_name, r.external_id, r.do_not_call,
    string_to_array(r.tags, chr(31)), r.custom_fields, r.conversation_count, r.last_ts::bigint,
    r.created_ts::bigint, r.modified_ts::bigint,
    ${
  ContactsQuery.searchTextExpression({
    phoneNumber: "r.phone_number",
    firstName: "r.first_name",
    lastName: "r.last_name",
    externalId: "r.external_id",
    customFields: "r.custom_fields"
  })
}
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::text[],
    $9::jsonb[], $10::int4[], $11::float8[], $12::float8[], $13::float8[])
    AS r(org_id, contact_id, phone_number, first_name, last_name, external_id, do_not_call, tags, custom_fields,
      conversation_count, last_ts, created_ts, modified_ts)
  ${skipDuplicates ? "ON CONFLICT DO NOTHING" : ""}`

const arrayParameter = (values: ReadonlyArray<unknown>, oid: number): PgTypes.Parameter => {
  const result = PgTypes.array(values, oid)
  if (result._tag === "Failure") throw result.failure
  return result.success
}

/**
 * The thirteen array parameters of the insert, bound binary (no text round trip per value).
 *
 * @category constructors
 */
export const insertParameters = (c: ContactColumns): Array<unknown> => [
  arrayParameter(c.orgId, PgTypes.OID.text),
  arrayParameter(c.contactId, PgTypes.OID.text),
  arrayParameter(c.phoneNumber, PgTypes.OID.text),
  arrayParameter(c.firstName, PgTypes.OID.text),
  arrayParameter(c.lastName, PgTypes.OID.text),
  arrayParameter(c.externalId, PgTypes.OID.text),
  arrayParameter(c.doNotCall, PgTypes.OID.bool),
  arrayParameter(c.tags, PgTypes.OID.text),
  arrayParameter(c.customFields, PgTypes.OID.jsonb),
  arrayParameter(c.conversationCount, PgTypes.OID.int4),
  arrayParameter(c.lastConversationTimestamp, PgTypes.OID.float8),
  arrayParameter(c.createdTimestamp, PgTypes.OID.float8),
  arrayParameter(c.userModifiedTimestamp, PgTypes.OID.float8)
]

interface Chunk {
  readonly orgId: string
  readonly size: number
  readonly columns: ContactColumns
}

/**
 * Generates and inserts the planned contacts in one transaction, rebuilding the secondary indexes
 * around a large load, then refreshes the planner statistics.
 *
 * @category constructors
 */
export const load = Effect.fnUntraced(function*(
  plans: ReadonlyArray<SeedPlan>,
  options: LoadOptions = {}
): Effect.fn.Return<SeedResult, SqlError, SqlClient.SqlClient> {
  const sql = yield* SqlClient.SqlClient
  const started = yield* Clock.currentTimeMillis
  const seed = options.seed ?? 1
  const now = options.now ?? started
  const chunkSize = Math.max(1, options.chunkSize ?? 20_000)
  const total = plans.reduce((sum, plan) => sum + Math.max(0, plan.contacts), 0)
  const progress = options.onProgress ?? (() => {})
  const countOf = (orgId: string) =>
    sql<{ n: string | number | bigint }>`
      SELECT coalesce((SELECT contacts FROM contact_counts WHERE org_id = ${orgId}), 0) AS n`.pipe(
      Effect.map((rows) => Number(rows[0]?.n ?? 0))
    )

  const result = yield* sql.withTransaction(Effect.gen(function*() {
    // Two seeds of one org at once would compute the same start index; the second waits.
    for (const plan of [...plans].sort((a, b) => a.orgId < b.orgId ? -1 : 1)) {
      yield* sql`SELECT pg_advisory_xact_lock(${SEED_LOCK}, hashtext(${plan.orgId}))`
    }
    const starts = new Map<string, number>()
    for (const plan of plans) starts.set(plan.orgId, yield* countOf(plan.orgId))
    const existing = yield* sql<{ n: string | number | bigint }>`
      SELECT coalesce(sum(contacts), 0) AS n FROM contact_counts`
    const rows = Number(existing[0]?.n ?? 0)
    const rebuild = options.rebuildIndexes === "auto" || options.rebuildIndexes === undefined
      ? total >= 100_000 && total >= rows
      : options.rebuildIndexes
    // Into orgs that have no contacts yet no number can collide (the numbers of one seed are
    // distinct), so the phone key may be rebuilt too, and the insert needs no conflict check.
    const fresh = [...starts.values()].every((n) => n === 0)
    const rebuildPhoneKey = rebuild && fresh
    // Index builds sort in memory when they may: the default 64 MB spills a trigram build to disk.
    yield* sql`SET LOCAL maintenance_work_mem = '1GB'`
    if (rebuild) {
      for (const [name] of SECONDARY_INDEXES) yield* sql.unsafe(`DROP INDEX IF EXISTS ${name}`)
    }
    if (rebuildPhoneKey) yield* sql`ALTER TABLE contacts DROP CONSTRAINT contacts_org_phone_key`
    const insert = insertStatement(!rebuildPhoneKey)

    // An org may appear in several plans (interleaved loads): each continues where the last stopped.
    const nextIndex = new Map(starts)
    const chunks = function*(): Generator<Chunk> {
      for (const plan of plans) {
        const start = nextIndex.get(plan.orgId)!
        nextIndex.set(plan.orgId, start + plan.contacts)
        for (let from = 0; from < plan.contacts; from += chunkSize) {
          const size = Math.min(chunkSize, plan.contacts - from)
          yield {
            orgId: plan.orgId,
            size,
            columns: generate(plan.orgId, { seed, start: start + from, count: size, now })
          }
        }
      }
    }
    let done = 0
    progress({ phase: "load", done, total })
    const source = chunks()
    let next = source.next()
    while (!next.done) {
      const chunk = next.value
      // The database inserts one chunk while this process generates the next: two cores busy.
      const running = yield* Effect.forkChild(sql.unsafe(insert, insertParameters(chunk.columns)).raw)
      yield* Effect.yieldNow
      next = source.next()
      yield* Fiber.join(running)
      done += chunk.size
      progress({ phase: "load", done, total })
    }
    if (rebuild) {
      yield* rebuildIndexes(sql, rebuildPhoneKey, progress)
    }
    const inserted: Array<SeedPlan> = []
    for (const [orgId, start] of starts) inserted.push({ orgId, contacts: (yield* countOf(orgId)) - start })
    return { inserted, rebuild }
  }))
  progress({ phase: "analyze", done: 0, total: 1 })
  // Fresh statistics, and a visibility map for index-only scans; VACUUM cannot run in a transaction.
  yield* sql`VACUUM (ANALYZE) contacts, contact_search`
  progress({ phase: "analyze", done: 1, total: 1 })
  const finished = yield* Clock.currentTimeMillis
  return { inserted: result.inserted, rebuiltIndexes: result.rebuild, millis: finished - started }
})

/**
 * `pg_advisory_xact_lock` class key of seeds and contact imports: "svc:seed" hashed, fixed forever.
 *
 * @category models
 */
export const SEED_LOCK = 0x5356_5345
