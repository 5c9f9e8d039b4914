/**
 * The SQL of `POST /list-contacts`, as pure functions from a decoded request to statement text and
 * parameters. The repository runs these statements, and the benchmark runs the very same text
 * through a bare `pg` client as its baseline, so parameters are plain values both drivers bind
 * (strings, numbers, booleans, string arrays) with explicit casts in the text.
 *
 * Invariants:
 * - every statement is scoped by `org_id = $1`, the caller's org (never one taken from a key);
 * - the order is `coalesce(last_conversation_timestamp, 0)` then `contact_id`, both in the requested
 *   direction (never contacted = 0, design), which `contacts_org_order` serves forwards or backwards;
 *   the keyset seek is one row comparison on that index;
 * - filter members and custom-field conditions are AND-combined (design: filter members);
 * - `search_query` is a case-insensitive substring of one field: control characters are removed
 *   (the fields are joined by U+001F in `search_text`; the HTTP edge refuses them, decision 0105, so
 *   this only guards other callers) and `%`, `_`, `\` match literally;
 * - statements whose plan depends on the values (filters, search) are marked `custom`: they must
 *   run unprepared, because a generic plan of a prepared statement makes searches 10-600x slower
 *   (postgres-floor.md, Conclusions 5).
 */
import type { NumberFilter, RangeFilter, StringFilter } from "@svc/domain/models/FilterCondition.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import type { ContactFilterCriteria, CustomFieldFilter, ListContactsRequest } from "@svc/domain/models/ListContacts.ts"
import * as Pagination from "@svc/domain/Pagination.ts"

/**
 * A statement: text with `$n` placeholders and its parameters. `custom` asks for a plan made for
 * these parameter values (run it unprepared).
 *
 * @category models
 */
export interface SqlText {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  readonly custom: boolean
}

/**
 * The columns every contact query returns, in the order of the `Contact` model.
 *
 * @category encoding
 */
export const contactColumns = "contact_id, org_id, phone_number, created_timestamp, first_name, last_name, " +
  "do_not_call, external_id, contact_tags, custom_fields, conversation_count, last_conversation_timestamp, " +
  "user_modified_timestamp"

/**
 * The `search_text` of a row from its source columns, as SQL over the given column expressions. It
 * is the expression of the `contacts_search_text` trigger (migration 0003), inlined: bulk loaders
 * compute the text set-wise with it, which costs about 3 µs a row instead of the trigger's 17 µs.
 *
 * @category encoding
 */
export const searchTextExpression = (columns: {
  readonly phoneNumber: string
  readonly firstName: string
  readonly lastName: string
  readonly externalId: string
  readonly customFields: string
}): string =>
  `lower(concat_ws(chr(31), ${columns.phoneNumber}, ${columns.firstName}, ${columns.lastName}, ` +
  `${columns.externalId}, (SELECT string_agg(value, chr(31)) FROM jsonb_each_text(${columns.customFields}))))`

// C0 and C1 control characters: U+001F separates the fields of search_text, so a query can never
// contain it, and no stored field holds any of them meaningfully.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/**
 * The effective search of a `search_query`: control characters removed; `undefined` when nothing
 * is left (an empty search matches everything, so it is no search).
 *
 * @category encoding
 */
export const normalizeSearch = (query: string | undefined): string | undefined => {
  if (query === undefined) return undefined
  const cleaned = query.replace(CONTROL, "")
  return cleaned.length === 0 ? undefined : cleaned
}

/**
 * `text` with the LIKE metacharacters `%`, `_` and the escape character `\` escaped, so that it
 * matches literally inside a LIKE pattern (PostgreSQL's default escape is `\`).
 *
 * @category encoding
 */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, "\\$&")

/**
 * Whether PostgreSQL can hold `text`: `text` and `jsonb` refuse U+0000, and a lone UTF-16 surrogate
 * has no UTF-8 form. A condition on such a string can match no stored value, so it becomes a
 * constant instead of a statement that fails.
 *
 * @category guards
 */
export const isStorable = (text: string): boolean => !text.includes("\u0000") && text.isWellFormed()

/**
 * Whether a request selects a subset of the org's contacts (so its total needs a count), rather
 * than all of them (whose total is the maintained per-org count).
 *
 * @category guards
 */
export const isFiltered = (request: ListContactsRequest): boolean =>
  normalizeSearch(request.search_query) !== undefined ||
  (request.filter_criteria !== undefined && Object.keys(request.filter_criteria).length > 0)

/**
 * The fingerprint a pagination key is bound to: everything that selects and orders the rows,
 * defaults applied, nothing that pages (docs/decisions/0102-cursor-keys.md, Query fingerprint).
 *
 * @category encoding
 */
export const fingerprint = (request: ListContactsRequest): Pagination.QueryFingerprint =>
  Pagination.queryFingerprint({
    resource: "contacts",
    filter_criteria: request.filter_criteria ?? {},
    search_query: normalizeSearch(request.search_query) ?? "",
    sort_order: request.sort_order
  })

/** Accumulates parameters and hands out their placeholders. */
class Params {
  readonly values: Array<unknown>
  constructor(orgId: OrgId) {
    this.values = [orgId]
  }
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

const ORDER_KEY = "coalesce(last_conversation_timestamp, 0)"

const TRUE = "TRUE"
const FALSE = "FALSE"

/** A string condition on a text column. `ne` also matches a missing value, as "not equal" reads. */
const stringCondition = (column: string, filter: StringFilter, p: Params): string => {
  if (!isStorable(filter.value)) return filter.op === "ne" ? TRUE : FALSE
  switch (filter.op) {
    case "eq":
      return `${column} = ${p.add(filter.value)}`
    case "ne":
      return `${column} IS DISTINCT FROM ${p.add(filter.value)}`
    case "sw":
      return `${column} LIKE ${p.add(escapeLike(filter.value) + "%")}`
    case "ew":
      return `${column} LIKE ${p.add("%" + escapeLike(filter.value))}`
    case "co":
      return `${column} LIKE ${p.add("%" + escapeLike(filter.value) + "%")}`
  }
}

// bigint range the stored timestamps live in; a bound beyond it decides the comparison outright.
const INT64_LIMIT = 9_007_199_254_740_991

/**
 * A number condition on an integer expression. Bounds become integers here (x > 1.5 is x >= 2), so
 * the comparison stays bigint-to-bigint and the order index can serve it.
 */
const integerCondition = (expression: string, op: NumberFilter["op"], value: number, p: Params): string => {
  const integral = Number.isInteger(value)
  if (value > INT64_LIMIT) return op === "lt" || op === "le" || op === "ne" ? TRUE : FALSE
  if (value < -INT64_LIMIT) return op === "gt" || op === "ge" || op === "ne" ? TRUE : FALSE
  switch (op) {
    case "eq":
      return integral ? `${expression} = ${p.add(value)}::bigint` : FALSE
    case "ne":
      return integral ? `${expression} <> ${p.add(value)}::bigint` : TRUE
    case "gt":
      return `${expression} > ${p.add(Math.floor(value))}::bigint`
    case "ge":
      return `${expression} >= ${p.add(Math.ceil(value))}::bigint`
    case "lt":
      return `${expression} < ${p.add(Math.ceil(value))}::bigint`
    case "le":
      return `${expression} <= ${p.add(Math.floor(value))}::bigint`
  }
}

const integerRange = (expression: string, [lower, upper]: RangeFilter["value"], p: Params): string => {
  const low = Math.max(Math.ceil(lower), -INT64_LIMIT)
  const high = Math.min(Math.floor(upper), INT64_LIMIT)
  return low > high ? FALSE : `${expression} BETWEEN ${p.add(low)}::bigint AND ${p.add(high)}::bigint`
}

const NUMBER_OPERATORS = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" } as const

/**
 * A condition on one custom field. Conditions are typed: a string condition looks at string values,
 * a number condition at numbers, a boolean one at booleans, so `"5"` and `5` are different values.
 * Equality is containment (`@>`), which the `jsonb_path_ops` index answers.
 */
const customFieldCondition = (filter: CustomFieldFilter, p: Params): string => {
  if (!isStorable(filter.key)) {
    // no stored object has this key: only the negated conditions hold
    return filter.op === "ne" || filter.op === "np" ? TRUE : FALSE
  }
  const contains = (value: unknown) => `custom_fields @> ${p.add(JSON.stringify({ [filter.key]: value }))}::jsonb`
  const typed = (type: string, cast: string) => {
    const key = p.add(filter.key)
    return `(CASE WHEN jsonb_typeof(custom_fields -> ${key}) = '${type}' THEN (custom_fields ->> ${key})${cast} END)`
  }
  switch (filter.type) {
    case "string":
      switch (filter.op) {
        case "eq":
          return isStorable(filter.value) ? contains(filter.value) : FALSE
        case "ne":
          return isStorable(filter.value) ? `NOT ${contains(filter.value)}` : TRUE
        default:
          return isStorable(filter.value) ? stringCondition(typed("string", ""), filter, p) : FALSE
      }
    case "number":
      switch (filter.op) {
        case "eq":
          return contains(filter.value)
        case "ne":
          return `NOT ${contains(filter.value)}`
        default:
          // Decimal text keeps the JSON number exact (a float8 parameter would round 0.1).
          return `${typed("number", "::numeric")} ${NUMBER_OPERATORS[filter.op]} ${
            p.add(String(filter.value))
          }::numeric`
      }
    case "boolean":
      return contains(filter.value)
    case "range":
      return `${typed("number", "::numeric")} BETWEEN ${p.add(String(filter.value[0]))}::numeric ` +
        `AND ${p.add(String(filter.value[1]))}::numeric`
    case "enum": {
      const values = filter.value.filter(isStorable)
      return values.length === 0 ? FALSE : `(${values.map(contains).join(" OR ")})`
    }
    case "present":
      return `${filter.op === "np" ? "NOT " : ""}custom_fields ? ${p.add(filter.key)}`
  }
}

const filterConditions = (criteria: ContactFilterCriteria, p: Params): Array<string> => {
  const out: Array<string> = []
  if (criteria.contact_id !== undefined) out.push(stringCondition("contact_id", criteria.contact_id, p))
  if (criteria.phone_number !== undefined) out.push(stringCondition("phone_number", criteria.phone_number, p))
  const external = criteria.external_id
  if (external !== undefined) {
    out.push(
      external.type === "present"
        ? `external_id IS ${external.op === "pr" ? "NOT " : ""}NULL`
        : stringCondition("external_id", external, p)
    )
  }
  const last = criteria.last_conversation_timestamp
  if (last !== undefined) {
    out.push(
      last.type === "range"
        ? integerRange(ORDER_KEY, last.value, p)
        : integerCondition(ORDER_KEY, last.op, last.value, p)
    )
  }
  if (criteria.do_not_call !== undefined) out.push(`do_not_call = ${p.add(criteria.do_not_call.value)}`)
  // spec (vendor): tags matches contacts having ANY of the listed tags
  if (criteria.tags !== undefined) {
    const tags = criteria.tags.value.filter(isStorable)
    out.push(tags.length === 0 ? FALSE : `contact_tags && ${p.add(tags)}::text[]`)
  }
  for (const field of criteria.custom_fields ?? []) out.push(customFieldCondition(field, p))
  return out
}

/**
 * `WHERE` of the request's filters and search, with the org first; `searchOnly` when the search is its only
 * condition besides the org, so that `contact_search` (org, id and search text) can answer it.
 */
const whereOf = (
  orgId: OrgId,
  request: ListContactsRequest
): { readonly where: string; readonly p: Params; readonly searchOnly: boolean } => {
  const p = new Params(orgId)
  const conditions = ["org_id = $1"]
  if (request.filter_criteria !== undefined) conditions.push(...filterConditions(request.filter_criteria, p))
  const filters = conditions.length - 1
  const search = normalizeSearch(request.search_query)
  if (search !== undefined) {
    // lower() on both sides: the same case mapping as the stored text, whatever the server's locale.
    conditions.push(
      isStorable(search) ? `search_text LIKE '%' || lower(${p.add(escapeLike(search))}) || '%'` : FALSE
    )
  }
  return { where: conditions.join(" AND "), p, searchOnly: search !== undefined && filters === 0 }
}

/**
 * Where a page starts: after a keyset position, or after `offset` rows (`skip`, the slow path).
 *
 * @category models
 */
export type PageStart =
  | { readonly _tag: "First" }
  | { readonly _tag: "After"; readonly sortValue: number; readonly contactId: string }
  | { readonly _tag: "Offset"; readonly offset: number }

/**
 * The page statement: up to `limit + 1` contacts (the extra row tells `has_more` without a count).
 * For an unfiltered request it also returns the maintained org count as `total` on every row (an
 * InitPlan, evaluated once, in the page's snapshot).
 *
 * @category constructors
 */
export const pageStatement = (orgId: OrgId, request: ListContactsRequest, start: PageStart): SqlText => {
  const { filtered, p, page } = pageOf(orgId, request, start)
  const total = filtered ? "" : ", (SELECT contacts FROM contact_counts WHERE org_id = $1) AS total"
  return { text: `SELECT ${contactColumns}${total} FROM contacts WHERE ${page}`, params: p.values, custom: filtered }
}

/** The parts every page statement shares: `WHERE` (org, filters, search, keyset seek), order, limit and offset. */
const pageOf = (orgId: OrgId, request: ListContactsRequest, start: PageStart) => {
  const filtered = isFiltered(request)
  const { p, where } = whereOf(orgId, request)
  const direction = request.sort_order === "asc" ? "ASC" : "DESC"
  let seek = ""
  if (start._tag === "After") {
    const operator = request.sort_order === "asc" ? ">" : "<"
    seek = ` AND (${ORDER_KEY}, contact_id) ${operator} (${p.add(start.sortValue)}::bigint, ${p.add(start.contactId)})`
  }
  const limit = p.add(request.limit + 1)
  const offset = start._tag === "Offset" && start.offset > 0 ? ` OFFSET ${p.add(start.offset)}` : ""
  return {
    filtered,
    p,
    direction,
    page: `${where}${seek} ORDER BY ${ORDER_KEY} ${direction}, contact_id ${direction} LIMIT ${limit}${offset}`
  }
}

/**
 * The exact number of the request's matches.
 *
 * @category constructors
 */
export const countStatement = (orgId: OrgId, request: ListContactsRequest): SqlText => {
  const { p, searchOnly, where } = whereOf(orgId, request)
  // A search alone is counted on the narrow copy of the search text (migration 0027, decision 0643): the
  // trigram recheck then reads 171-byte rows instead of whole contacts (0.46x the time at 1M contacts).
  const table = searchOnly ? "contact_search" : "contacts"
  return { text: `SELECT count(*) AS total FROM ${table} WHERE ${where}`, params: p.values, custom: true }
}

/**
 * The exact number of the request's matches counted over `contacts` itself, whatever the request: the bare
 * count the benchmarks compare the product with (decision 0643), and the reference the tests hold the copy to.
 *
 * @category constructors
 */
export const contactsCountStatement = (orgId: OrgId, request: ListContactsRequest): SqlText => {
  const { p, where } = whereOf(orgId, request)
  return { text: `SELECT count(*) AS total FROM contacts WHERE ${where}`, params: p.values, custom: true }
}

/**
 * The maintained number of the org's contacts (0 for an org that never had one).
 *
 * @category constructors
 */
export const orgCountStatement = (orgId: OrgId): SqlText => ({
  text: "SELECT coalesce((SELECT contacts FROM contact_counts WHERE org_id = $1), 0) AS total",
  params: [orgId],
  custom: false
})
