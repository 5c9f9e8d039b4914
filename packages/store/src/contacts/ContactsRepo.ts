/**
 * Contacts of an org: `POST /list-contacts` and the companion create/get/update/delete endpoints
 * (spec, list-contacts; vendor-api-facts §2.1).
 *
 * Invariants:
 * - every statement is scoped to the caller's org: ids and pagination keys only choose rows inside it;
 * - one contact per phone number per org: a second one is {@link DuplicatePhoneNumber};
 * - `total` is exact: the maintained per-org count when nothing is filtered (O(1), in the page's own
 *   snapshot), otherwise a count of the matches taken beside the first page (on a second connection,
 *   at the same time) and carried inside the signed pagination key, so later pages cost a page and
 *   not a recount (decision 0301: later pages at the cost of a page); `has_more` comes from fetching one
 *   row more than `limit`;
 * - text PostgreSQL cannot store (U+0000, lone surrogates) is `UnstorableText` naming the field on
 *   writes, and a filter value that can match nothing on reads, never a failed statement;
 * - filtered and search statements run unprepared, so each gets a plan for its own values (a generic
 *   plan makes searches 10-600x slower: postgres-floor.md); the unfiltered page stays prepared;
 * - timestamps come from the `Clock`, new ids are UUIDs in the version 7 layout;
 * - `listJson` is `list`'s page as the bytes of its schema encoding, written without the schema: each row becomes
 *   the plain object the schema's encoding would make (same keys, same order) and the page one `JSON.stringify`;
 *   a page holding a value the schema refuses takes `list` and the schema.
 *
 * Decision records: docs/decisions/0301-contacts-storage.md, 0641-list-contacts-json-in-node.md (which replaced
 * 0640, the page's JSON written by PostgreSQL)
 */
import { Contact, type CustomFields } from "@svc/domain/models/Contact.ts"
import { type CreateContactRequest, requestedTags, type UpdateContactRequest } from "@svc/domain/models/ContactInput.ts"
import type { E164 } from "@svc/domain/models/E164.ts"
import type { ContactId, OrgId } from "@svc/domain/models/Ids.ts"
import { type ListContactsRequest, ListContactsResponse } from "@svc/domain/models/ListContacts.ts"
import type * as Pagination from "@svc/domain/Pagination.ts"
import { Clock, Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as crypto from "node:crypto"
import { UnstorableText } from "../batches/index.ts"
import { CursorKeys } from "../db/CursorKeys.ts"
import * as ContactsQuery from "./ContactsQuery.ts"

/**
 * No contact with this id in the caller's org.
 *
 * @category errors
 */
export class ContactNotFound extends Schema.TaggedError<ContactNotFound>()("ContactNotFound", {
  contact_id: Schema.String,
  message: Schema.String
}) {}

/**
 * The org already has a contact with this phone number (one contact per number per org).
 *
 * @category errors
 */
export class DuplicatePhoneNumber extends Schema.TaggedError<DuplicatePhoneNumber>()("DuplicatePhoneNumber", {
  phone_number: Schema.String,
  message: Schema.String
}) {}

/**
 * The `pagination_key` is not one this service issued for this org and this query.
 *
 * @category errors
 */
export class InvalidPaginationKey extends Schema.TaggedError<InvalidPaginationKey>()("InvalidPaginationKey", {
  message: Schema.String
}) {}

/** A contact row as the driver returns it (int8 columns arrive as bigint). */
export interface ContactRow {
  readonly contact_id: ContactId
  readonly org_id: OrgId
  readonly phone_number: E164
  readonly created_timestamp: bigint | number
  readonly first_name: string | null
  readonly last_name: string | null
  readonly do_not_call: boolean
  readonly external_id: string | null
  readonly contact_tags: ReadonlyArray<string>
  readonly custom_fields: CustomFields
  readonly conversation_count: number
  readonly last_conversation_timestamp: bigint | number | null
  readonly user_modified_timestamp: bigint | number
  readonly total?: bigint | number | null
}

/**
 * A `Contact` from fields that satisfy its schema by construction: what the class constructor
 * builds (the class prototype and the fields as own properties) without its per-field parse,
 * which costs about 1 ms per page of 100 contacts. Rows qualify because the table's constraints and
 * the write paths keep them valid (ids and numbers were decoded on the way in, counts are checked
 * non-negative); the HTTP edge still encodes every response through the schema.
 */
const trustedContact = (fields: ContactFields): Contact =>
  Object.assign(Object.create(Contact.prototype) as Contact, fields)

type ContactFields = { -readonly [K in keyof Contact]: Contact[K] }

/**
 * The API shape of a stored row: names, external id and last conversation only when they have a
 * value (a never-contacted contact has no `last_conversation_timestamp`: design).
 *
 * @category encoding
 */
export const toContact = (row: ContactRow): Contact => {
  // In the model's field order, as the class constructor would assign them.
  const fields: ContactFields = {
    contact_id: row.contact_id,
    org_id: row.org_id,
    phone_number: row.phone_number,
    created_timestamp: Number(row.created_timestamp)
  } as ContactFields
  if (row.first_name !== null) fields.first_name = row.first_name
  if (row.last_name !== null) fields.last_name = row.last_name
  fields.do_not_call = row.do_not_call
  if (row.external_id !== null) fields.external_id = row.external_id
  fields.contact_tags = row.contact_tags
  fields.custom_fields = row.custom_fields
  fields.conversation_count = row.conversation_count
  if (row.last_conversation_timestamp !== null) {
    fields.last_conversation_timestamp = Number(row.last_conversation_timestamp)
  }
  fields.user_modified_timestamp = Number(row.user_modified_timestamp)
  return trustedContact(fields)
}

const plainValue = (v: unknown) =>
  typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))

/**
 * A row as the plain object the schema's encoding of its `Contact` is (the same keys in the same order), or undefined
 * when the schema would refuse it: a custom field that is not a string, finite number or boolean, a `__proto__` key,
 * a tag that is not a string.
 *
 * @category encoding
 */
export const plainContact = (row: ContactRow): Record<string, unknown> | undefined => {
  const custom = row.custom_fields as Record<string, unknown>
  for (const key in custom) {
    if (key === "__proto__" || !plainValue(custom[key])) return undefined
  }
  for (const tag of row.contact_tags) if (typeof tag !== "string") return undefined
  const item: Record<string, unknown> = {
    contact_id: row.contact_id,
    org_id: row.org_id,
    phone_number: row.phone_number,
    created_timestamp: Number(row.created_timestamp)
  }
  if (row.first_name !== null) item["first_name"] = row.first_name
  if (row.last_name !== null) item["last_name"] = row.last_name
  item["do_not_call"] = row.do_not_call
  if (row.external_id !== null) item["external_id"] = row.external_id
  item["contact_tags"] = row.contact_tags
  item["custom_fields"] = custom
  item["conversation_count"] = row.conversation_count
  if (row.last_conversation_timestamp !== null) {
    item["last_conversation_timestamp"] = Number(row.last_conversation_timestamp)
  }
  item["user_modified_timestamp"] = Number(row.user_modified_timestamp)
  return item
}

/** The sort value of a contact in the list order: its last conversation, never contacted = 0. */
const sortValueOf = (contact: Contact): number => contact.last_conversation_timestamp ?? 0

/**
 * What a pagination key of list-contacts carries beyond the position's sort value: the contact id
 * of the last row and, for a filtered listing, the total counted with its first page. Both go in the
 * position's `id` as `<total>:<contact id>` (`:<contact id>` without a total); the key is signed, so
 * neither can be altered by the client.
 */
const encodeKeyId = (contactId: string, total: number | undefined): string => `${total ?? ""}:${contactId}`

const decodeKeyId = (id: string): { readonly contactId: string; readonly total: number | undefined } | undefined => {
  const at = id.indexOf(":")
  if (at < 0 || at === id.length - 1) return undefined
  const total = id.slice(0, at)
  if (total !== "" && !/^\d{1,15}$/.test(total)) return undefined
  return { contactId: id.slice(at + 1), total: total === "" ? undefined : Number(total) }
}

const malformedKey = new InvalidPaginationKey({
  message: "pagination_key is not a contacts key; pass the pagination_key of the previous response unchanged, " +
    "or start again without pagination_key"
})

/**
 * A new contact id: a UUID in the version 7 layout (RFC 9562 §5.7), creation time first, so ids
 * of one org grow with time and inserts append to the primary key.
 */
const newContactId = (millis: number): string => {
  const bytes = crypto.randomBytes(16)
  let time = Math.floor(millis)
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256
    time = Math.floor(time / 256)
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Custom-field values without the ones a request sets to `null` (null clears a field: vendor). */
const withoutNulls = (fields: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) if (value !== null) out[key] = value
  return out
}

const uniqueTags = (tags: ReadonlyArray<string>): Array<string> => [...new Set(tags)]

/**
 * The first text field of a create or update request that PostgreSQL cannot store (U+0000 or a lone
 * surrogate), as a JSON client spells its path; such a request is a 400 naming it, not a failed
 * statement.
 */
const unstorableField = (request: CreateContactRequest | UpdateContactRequest): UnstorableText | undefined => {
  const bad = (value: unknown) => typeof value === "string" && !ContactsQuery.isStorable(value)
  const fields: Array<readonly [string, unknown]> = [
    ["first_name", request.first_name],
    ["last_name", request.last_name],
    ["external_id", request.external_id],
    ...(request.tags ?? []).map((tag, i) => [`tags[${i}]`, tag] as const),
    ...(request.contact_tags ?? []).map((tag, i) => [`contact_tags[${i}]`, tag] as const),
    ...Object.entries(request.custom_fields ?? {}).flatMap(([key, value]) => [
      [`custom_fields`, key] as const,
      [`custom_fields.${key}`, value] as const
    ])
  ]
  const field = fields.find(([, value]) => bad(value))?.[0]
  return field === undefined ? undefined : new UnstorableText({
    field,
    message: `${field} contains a NUL character (\\u0000) or an unpaired surrogate, which cannot be stored`
  })
}

/**
 * The contacts repository.
 *
 * @category services
 */
export class ContactsRepo extends Context.Service<ContactsRepo, {
  /** One page of the org's contacts matching the request, with the exact total. */
  readonly list: (orgId: OrgId, request: ListContactsRequest) => Effect.Effect<
    ListContactsResponse,
    InvalidPaginationKey
  >
  /**
   * The same page as {@link list}, as the JSON text of its schema encoding (`ListContactsResponse`), byte for
   * byte: each row as the plain object the schema's encoding makes, the page one `JSON.stringify`, no schema on the
   * way (decision 0641).
   */
  readonly listJson: (orgId: OrgId, request: ListContactsRequest) => Effect.Effect<string, InvalidPaginationKey>
  readonly create: (
    orgId: OrgId,
    request: CreateContactRequest
  ) => Effect.Effect<Contact, DuplicatePhoneNumber | UnstorableText>
  readonly get: (orgId: OrgId, contactId: ContactId) => Effect.Effect<Contact, ContactNotFound>
  /** The org's contact with this phone number (the scheduler's do-not-call check, get-contact-by-phone). */
  readonly getByPhone: (orgId: OrgId, phoneNumber: string) => Effect.Effect<Contact, ContactNotFound>
  /** Changes the fields the request carries; `tags` replace the list, custom fields merge (null clears). */
  readonly update: (
    orgId: OrgId,
    contactId: ContactId,
    request: UpdateContactRequest
  ) => Effect.Effect<Contact, ContactNotFound | UnstorableText>
  readonly delete: (orgId: OrgId, contactId: ContactId) => Effect.Effect<void, ContactNotFound>
  /** The number of the org's contacts (the maintained count). */
  readonly count: (orgId: OrgId) => Effect.Effect<number>
}>()("@svc/store/ContactsRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<ContactsRepo, never, SqlClient.SqlClient | CursorKeys> = Layer.effect(
    ContactsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cursors: Pagination.CursorCodec = yield* CursorKeys

      const run = <A extends object>(statement: ContactsQuery.SqlText): Effect.Effect<ReadonlyArray<A>> => {
        const query = sql.unsafe<A>(statement.text, statement.params)
        return (statement.custom ? query.unprepared : query).pipe(Effect.orDie)
      }

      const totalOf = (rows: ReadonlyArray<{ readonly total?: bigint | number | string | null }>): number =>
        Number(rows[0]?.total ?? 0)

      const count = (orgId: OrgId) =>
        run<{ total: bigint }>(ContactsQuery.orgCountStatement(orgId)).pipe(
          Effect.map(totalOf),
          Effect.withSpan("ContactsRepo.count")
        )

      /** Where the request's page starts, and the total its key carries. */
      const startOf = (orgId: OrgId, request: ListContactsRequest) =>
        Effect.suspend(() => {
          const context: Pagination.CursorContext = { orgId, queryFingerprint: ContactsQuery.fingerprint(request) }
          if (request.pagination_key !== undefined) {
            const decoded = cursors.decode(request.pagination_key, context)
            if (Result.isFailure(decoded)) {
              return Effect.fail(new InvalidPaginationKey({ message: decoded.failure.message }))
            }
            const position = decoded.success
            const id = decodeKeyId(position.id)
            if (typeof position.sortValue !== "number" || id === undefined) return Effect.fail(malformedKey)
            return Effect.succeed({
              context,
              start: {
                _tag: "After",
                sortValue: position.sortValue,
                contactId: id.contactId
              } as ContactsQuery.PageStart,
              carriedTotal: id.total
            })
          }
          const start: ContactsQuery.PageStart = request.skip !== undefined && request.skip > 0
            ? { _tag: "Offset", offset: request.skip }
            : { _tag: "First" }
          return Effect.succeed({ context, start, carriedTotal: undefined as number | undefined })
        })

      /**
       * The request's rows (one more than `limit` when there is a next page) and the total of its listing, for
       * `list` and `listJson` alike (decision 0641).
       */
      const pageOf = Effect.fnUntraced(function*(orgId: OrgId, request: ListContactsRequest) {
        const filtered = ContactsQuery.isFiltered(request)
        const { carriedTotal, context, start } = yield* startOf(orgId, request)

        const page = run<ContactRow>(ContactsQuery.pageStatement(orgId, request, start))
        // A filtered listing counts its matches with its first page (or a skip page), on a second
        // connection at the same time: both usually walk the same trigram or jsonb bitmap, so the
        // wall time is one scan instead of two. Later pages read the total from their key.
        const [rows, counted] = filtered && carriedTotal === undefined
          ? yield* Effect.all([page, run<{ total: bigint }>(ContactsQuery.countStatement(orgId, request))], {
            concurrency: 2
          })
          : [yield* page, undefined]

        let total: number
        if (!filtered) {
          // The count rode along with the page (same snapshot); an empty page has no row to carry it.
          total = rows.length > 0 ? totalOf(rows) : yield* count(orgId)
        } else {
          total = carriedTotal ?? totalOf(counted ?? [])
        }
        return { rows, has_more: rows.length > request.limit, total, filtered, context }
      })

      const list = Effect.fn("ContactsRepo.list")(function*(orgId: OrgId, request: ListContactsRequest) {
        const { context, filtered, has_more, rows, total } = yield* pageOf(orgId, request)
        const items = (has_more ? rows.slice(0, request.limit) : rows).map(toContact)
        const last = items[items.length - 1]
        return new ListContactsResponse({
          has_more,
          items,
          ...(has_more && last !== undefined
            ? {
              pagination_key: cursors.encode(
                { sortValue: sortValueOf(last), id: encodeKeyId(last.contact_id, filtered ? total : undefined) },
                context
              )
            }
            : {}),
          total
        }, { disableChecks: true })
      })

      const encodeResponse = Schema.encodeSync(ListContactsResponse)

      const listJson = Effect.fn("ContactsRepo.listJson")(function*(orgId: OrgId, request: ListContactsRequest) {
        const { context, filtered, has_more, rows, total } = yield* pageOf(orgId, request)
        const n = has_more ? request.limit : rows.length
        const items = new Array<Record<string, unknown>>(n)
        for (let i = 0; i < n; i++) {
          const item = plainContact(rows[i]!)
          // a value the schema refuses: this page goes the schema's way (and fails as it does)
          if (item === undefined) return JSON.stringify(encodeResponse(yield* list(orgId, request)))
          items[i] = item
        }
        const last = items[n - 1]
        // ListContactsResponse's keys, in its order
        const out: Record<string, unknown> = { has_more, items }
        if (has_more && last !== undefined) {
          out["pagination_key"] = cursors.encode(
            {
              sortValue: (last["last_conversation_timestamp"] as number | undefined) ?? 0,
              id: encodeKeyId(last["contact_id"] as string, filtered ? total : undefined)
            },
            context
          )
        }
        out["total"] = total
        return JSON.stringify(out)
      })

      const one = (rows: ReadonlyArray<ContactRow>, contactId: ContactId) =>
        rows[0] === undefined
          ? Effect.fail(
            new ContactNotFound({ contact_id: contactId, message: `contact ${contactId} not found` })
          )
          : Effect.succeed(toContact(rows[0]))

      const columns = sql.literal(ContactsQuery.contactColumns)

      const get = Effect.fn("ContactsRepo.get")(function*(orgId: OrgId, contactId: ContactId) {
        const rows = yield* sql<ContactRow>`
          SELECT ${columns} FROM contacts WHERE org_id = ${orgId} AND contact_id = ${contactId}`.pipe(Effect.orDie)
        return yield* one(rows, contactId)
      })

      const getByPhone = Effect.fn("ContactsRepo.getByPhone")(function*(orgId: OrgId, phoneNumber: string) {
        const rows = yield* sql<ContactRow>`
          SELECT ${columns} FROM contacts WHERE org_id = ${orgId} AND phone_number = ${phoneNumber}`.pipe(
          Effect.orDie
        )
        return yield* rows[0] === undefined
          ? Effect.fail(
            new ContactNotFound({
              contact_id: phoneNumber,
              message: `no contact with phone_number ${phoneNumber}`
            })
          )
          : Effect.succeed(toContact(rows[0]))
      })

      const create = Effect.fn("ContactsRepo.create")(function*(orgId: OrgId, request: CreateContactRequest) {
        const unstorable = unstorableField(request)
        if (unstorable !== undefined) return yield* unstorable
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<ContactRow>`
          INSERT INTO contacts (org_id, contact_id, phone_number, first_name, last_name, external_id, do_not_call,
            contact_tags, custom_fields, created_timestamp, user_modified_timestamp)
          VALUES (${orgId}, ${newContactId(now)}, ${request.phone_number}, ${request.first_name ?? null},
            ${request.last_name ?? null}, ${request.external_id ?? null}, ${request.do_not_call ?? false},
            ${uniqueTags(requestedTags(request) ?? [])}::text[],
            ${JSON.stringify(withoutNulls(request.custom_fields ?? {}))}::jsonb, ${now}::bigint, ${now}::bigint)
          ON CONFLICT (org_id, phone_number) DO NOTHING
          RETURNING ${columns}`.pipe(Effect.orDie)
        // spec (vendor): at most one contact per phone number per org
        return yield* rows[0] === undefined
          ? Effect.fail(
            new DuplicatePhoneNumber({
              phone_number: request.phone_number,
              message: `phone_number ${request.phone_number} already belongs to a contact of this org`
            })
          )
          : Effect.succeed(toContact(rows[0]))
      })

      const update = Effect.fn("ContactsRepo.update")(
        function*(orgId: OrgId, contactId: ContactId, request: UpdateContactRequest) {
          const unstorable = unstorableField(request)
          if (unstorable !== undefined) return yield* unstorable
          const now = yield* Clock.currentTimeMillis
          const set = [sql`user_modified_timestamp = ${now}::bigint`]
          if (request.first_name !== undefined) set.push(sql`first_name = ${request.first_name}`)
          if (request.last_name !== undefined) set.push(sql`last_name = ${request.last_name}`)
          if (request.external_id !== undefined) set.push(sql`external_id = ${request.external_id}`)
          if (request.do_not_call !== undefined) set.push(sql`do_not_call = ${request.do_not_call}`)
          const tags = requestedTags(request)
          // vendor: tags is a full replacement
          if (tags !== undefined) set.push(sql`contact_tags = ${uniqueTags(tags)}::text[]`)
          if (request.custom_fields !== undefined) {
            // Merge: sent fields replace, null clears one, others stay (vendor: "null clears one").
            set.push(
              sql`custom_fields = jsonb_strip_nulls(custom_fields || ${JSON.stringify(request.custom_fields)}::jsonb)`
            )
          }
          const rows = yield* sql<ContactRow>`
            UPDATE contacts SET ${sql.csv(set)} WHERE org_id = ${orgId} AND contact_id = ${contactId}
            RETURNING ${columns}`.pipe(Effect.orDie)
          return yield* one(rows, contactId)
        }
      )

      const remove = Effect.fn("ContactsRepo.delete")(function*(orgId: OrgId, contactId: ContactId) {
        const rows = yield* sql<{ contact_id: string }>`
          DELETE FROM contacts WHERE org_id = ${orgId} AND contact_id = ${contactId} RETURNING contact_id`.pipe(
          Effect.orDie
        )
        if (rows.length === 0) {
          return yield* new ContactNotFound({ contact_id: contactId, message: `contact ${contactId} not found` })
        }
      })

      return ContactsRepo.of({ list, listJson, create, get, getByPhone, update, delete: remove, count })
    })
  )
}
