/**
 * Keyset pagination: opaque `pagination_key` strings and the ordering they page through.
 *
 * A key names a position in a list ordered by `(sort value, id)` (contacts: last conversation
 * timestamp then contact id; batch tests: creation timestamp then id), so the next page is "the rows
 * after this position" instead of an offset that skips or repeats rows when the list changes
 * (spec, list-contacts: "cursor paging is preferred").
 *
 * Invariants a decoded key guarantees, or a typed error says which one failed:
 * - it is a key this service minted with its current or previous secret, unaltered
 *   (an HMAC-SHA-256 tag, truncated to 16 bytes, over every other byte): {@link CursorTampered};
 * - it was minted for the organization that presents it: {@link CursorForeign};
 * - it was minted for the same query (filters, search, sort order; not `limit`, so a client may
 *   change its page size between pages): {@link CursorQueryMismatch};
 * - its format version is the one this build reads: {@link CursorStale};
 * - it is canonical base64url of a well-formed key at all: {@link CursorMalformed}.
 *
 * Decoding is a total function: any string, including empty, huge or random ones, gives a position
 * or one of those errors and never throws. Layout and rotation: docs/decisions/0102-cursor-keys.md.
 */
import { type Brand, type Order, Redacted, Result, Schema } from "effect"
import type { OrgId } from "./models/Ids.ts"
import * as Base64Url from "./Pagination/Base64Url.ts"
import * as Binary from "./Pagination/Binary.ts"
import { canonicalJson } from "./Pagination/CanonicalJson.ts"
import {
  BODY_AT,
  KIND_DOUBLE,
  KIND_INTEGER,
  KIND_STRING,
  labelled,
  MAC_BYTES,
  MARKER,
  MIN_KEY_BYTES,
  ORG_TAG_AT,
  ORG_TAG_BYTES,
  orgTag,
  QUERY_TAG_AT,
  QUERY_TAG_BYTES,
  readPosition,
  utf8,
  writeQueryTag
} from "./Pagination/KeyLayout.ts"
import { hmacSha256Into, type HmacSha256Key, hmacSha256Key, sha256, timingSafeEqual } from "./Pagination/Sha256.ts"

/**
 * The value a list is sorted by: a finite number (timestamps in milliseconds, with never-contacted
 * contacts compared as 0 per the design decisions) or a string.
 *
 * @category schemas
 */
export const SortValue = Schema.Union([Schema.Finite, Schema.String])

/**
 * @category models
 */
export type SortValue = typeof SortValue.Type

/**
 * A position in a list ordered by `(sortValue, id)`: the sort value and id of the last row of a page.
 *
 * @category schemas
 */
export const CursorPosition = Schema.Struct({
  sortValue: SortValue,
  id: Schema.String
})

/**
 * @category models
 */
export type CursorPosition = typeof CursorPosition.Type

/**
 * A short digest of the parts of a list request that select and order rows, from
 * {@link queryFingerprint}. A key minted under one fingerprint is refused under another.
 *
 * @category models
 */
export type QueryFingerprint = Brand.Branded<string, "QueryFingerprint">

/**
 * What a key is bound to: the organization of the API key that lists, and the query it lists.
 *
 * @category models
 */
export interface CursorContext {
  readonly orgId: OrgId
  readonly queryFingerprint: QueryFingerprint
}

/**
 * A secret for {@link makeCursorCodec}: at least {@link minimumSecretBytes} bytes, given as bytes
 * or as a string (its UTF-8 bytes), optionally wrapped in `Redacted` as `Config.redacted` yields it.
 *
 * @category models
 */
export type CursorSecret = string | Uint8Array | Redacted.Redacted<string | Uint8Array>

/**
 * @category models
 */
export interface CursorCodecOptions {
  /** Signs every new key, and is tried first when verifying one. */
  readonly secret: CursorSecret
  /**
   * Secrets still accepted when verifying, never used to sign: the secrets being rotated out (and,
   * during a rolling deployment, the one about to be rotated in). See the decision record.
   */
  readonly previousSecrets?: ReadonlyArray<CursorSecret> | undefined
}

/**
 * Mints and verifies `pagination_key` strings. Both functions are pure and synchronous.
 *
 * @category models
 */
export interface CursorCodec {
  /**
   * An opaque base64url key for the page after `position`, bound to `context`. Never throws; a
   * position outside {@link CursorPosition} (a non-finite number) gives a key that decodes as
   * {@link CursorMalformed}, as does one longer than {@link maxKeyLength}.
   */
  readonly encode: (position: CursorPosition, context: CursorContext) => string
  /** The position `key` names, if `key` is an authentic, current key minted for `context`. */
  readonly decode: (key: string, context: CursorContext) => Result.Result<CursorPosition, CursorError>
}

const START_AGAIN = "start again without pagination_key"

/**
 * The key is not something this service issues: not canonical base64url, truncated, too long, or
 * with an unreadable body.
 *
 * @category errors
 */
export class CursorMalformed extends Schema.TaggedError<CursorMalformed>()("CursorMalformed", {
  reason: Schema.String
}) {
  override get message(): string {
    return `pagination_key is not a valid key (${this.reason}); ` +
      `pass the pagination_key of the previous response unchanged, or ${START_AGAIN}`
  }
}

/**
 * The key's authentication tag does not match its content under any accepted secret: it was
 * altered, or was minted with a secret that has since been rotated out.
 *
 * @category errors
 */
export class CursorTampered extends Schema.TaggedError<CursorTampered>()("CursorTampered", {}) {
  override get message(): string {
    return "pagination_key failed its integrity check (it was altered, or it expired when the signing secret " +
      `was rotated); ${START_AGAIN}`
  }
}

/**
 * The key is authentic but was minted for another organization.
 *
 * @category errors
 */
export class CursorForeign extends Schema.TaggedError<CursorForeign>()("CursorForeign", {}) {
  override get message(): string {
    return `pagination_key was issued to a different organization than the one of this API key; ${START_AGAIN}`
  }
}

/**
 * The key is authentic but was minted for a different query (other filters, search or sort order).
 *
 * @category errors
 */
export class CursorQueryMismatch extends Schema.TaggedError<CursorQueryMismatch>()("CursorQueryMismatch", {}) {
  override get message(): string {
    return "pagination_key was issued for a different query; send the same filters, search and sort order " +
      `as the request that returned it (limit may change), or ${START_AGAIN}`
  }
}

/**
 * The key has a format version this build does not read (minted by an older or newer release).
 *
 * @category errors
 */
export class CursorStale extends Schema.TaggedError<CursorStale>()("CursorStale", {
  version: Schema.Number
}) {
  override get message(): string {
    return `pagination_key has format version ${this.version}, which this server does not read ` +
      `(the key comes from another release of the API); ${START_AGAIN}`
  }
}

/**
 * Every way a `pagination_key` can be refused; each is a 400 at the HTTP edge.
 *
 * @category errors
 */
export const CursorError = Schema.Union([
  CursorMalformed,
  CursorTampered,
  CursorForeign,
  CursorQueryMismatch,
  CursorStale
])

/**
 * @category errors
 */
export type CursorError = typeof CursorError.Type

/**
 * The key format this build writes and reads.
 *
 * @category encoding
 */
export const cursorFormatVersion = 1

/**
 * The longest key, in characters, that {@link CursorCodec.decode} looks at; longer input is
 * refused before any work. Keys stay below it while the id and a string sort value together take
 * under 3,000 bytes of UTF-8.
 *
 * @category encoding
 */
export const maxKeyLength = 4096

/**
 * The shortest accepted secret (256 bits, the HMAC-SHA-256 output size RFC 2104 §3 recommends).
 *
 * @category encoding
 */
export const minimumSecretBytes = 32

// The key's layout and its tags: Pagination/KeyLayout.ts (decision 0102).
const MAX_KEY_BYTES = Base64Url.decodedLength(maxKeyLength)

// Scratch buffers: encode and decode are synchronous and never call out, so one of each suffices.
let scratch = new Uint8Array(1024)
const decodeBuffer = new Uint8Array(MAX_KEY_BYTES)
const tagBuffer = new Uint8Array(MAC_BYTES)
const queryTagBuffer = new Uint8Array(QUERY_TAG_BYTES)

const secretBytes = (secret: CursorSecret): Uint8Array => {
  const raw: string | Uint8Array = Redacted.isRedacted(secret) ? Redacted.value(secret) : secret
  return typeof raw === "string" ? utf8(raw) : raw
}

const prepareSecret = (secret: CursorSecret): HmacSha256Key => {
  const bytes = secretBytes(secret)
  if (bytes.length < minimumSecretBytes) {
    // A configuration defect, found at startup when the codec is built: never on a request.
    throw new RangeError(
      `pagination key secret is ${bytes.length} bytes long; it needs at least ${minimumSecretBytes} random bytes`
    )
  }
  return hmacSha256Key(bytes)
}

const malformed = (reason: string): Result.Result<never, CursorError> => Result.fail(new CursorMalformed({ reason }))

/**
 * Builds the codec for `pagination_key`s from the service's secret(s).
 *
 * Throws a `RangeError` when a secret is shorter than {@link minimumSecretBytes}: that is a
 * deployment mistake to stop at startup, not a condition any request can cause.
 *
 * @category constructors
 */
export const makeCursorCodec = (options: CursorCodecOptions): CursorCodec => {
  const signing = prepareSecret(options.secret)
  const verifying = [signing, ...(options.previousSecrets ?? []).map(prepareSecret)]

  const encode = (position: CursorPosition, context: CursorContext): string => {
    const { id, sortValue } = position
    const worst = BODY_AT + 1 + (typeof sortValue === "string" ? Binary.maxStringBytes(sortValue) : 9) +
      Binary.maxStringBytes(id) + MAC_BYTES
    if (scratch.length < worst) scratch = new Uint8Array(Math.max(worst, 2 * scratch.length))
    const out = scratch
    out[0] = MARKER | cursorFormatVersion
    const org = orgTag(context.orgId)
    for (let i = 0; i < ORG_TAG_BYTES; i++) out[ORG_TAG_AT + i] = org[i]!
    writeQueryTag(context.queryFingerprint, out, QUERY_TAG_AT)
    let o = BODY_AT + 1
    if (typeof sortValue === "string") {
      out[BODY_AT] = KIND_STRING
      o = Binary.writeString(out, o, sortValue)
    } else if (Number.isSafeInteger(sortValue) && !Object.is(sortValue, -0)) {
      out[BODY_AT] = KIND_INTEGER
      o = Binary.writeSafeInteger(out, o, sortValue)
    } else {
      out[BODY_AT] = KIND_DOUBLE
      o = Binary.writeDouble(out, o, sortValue)
    }
    o = Binary.writeString(out, o, id)
    hmacSha256Into(signing, out, 0, o, out, o, MAC_BYTES)
    return Base64Url.encode(out, 0, o + MAC_BYTES)
  }

  const decode = (key: string, context: CursorContext): Result.Result<CursorPosition, CursorError> => {
    // Typed callers always pass a string; untyped JSON reaching here must still not throw.
    if (typeof key !== "string") return malformed("it is not a string")
    if (key.length === 0) return malformed("it is empty")
    if (key.length > maxKeyLength) return malformed(`it is longer than ${maxKeyLength} characters`)
    const bytes = decodeBuffer
    const length = Base64Url.decodeInto(key, bytes)
    if (length < 0) return malformed("it is not unpadded base64url")
    const marker = bytes[0]!
    if ((marker & 0xf0) !== MARKER) return malformed("it does not start like a pagination key")
    // The version is read before the tag is checked: another version may lay out or sign its bytes
    // differently, so its tag cannot be checked here.
    if ((marker & 0x0f) !== cursorFormatVersion) return Result.fail(new CursorStale({ version: marker & 0x0f }))
    if (length < MIN_KEY_BYTES) return malformed("it is truncated")
    const signed = length - MAC_BYTES
    let authentic = false
    for (const secret of verifying) {
      hmacSha256Into(secret, bytes, 0, signed, tagBuffer, 0, MAC_BYTES)
      if (timingSafeEqual(tagBuffer, 0, bytes, signed, MAC_BYTES)) {
        authentic = true
        break
      }
    }
    if (!authentic) return Result.fail(new CursorTampered())
    // Past the tag check every byte is ours, so plain comparisons are fine from here on.
    const org = orgTag(context.orgId)
    for (let i = 0; i < ORG_TAG_BYTES; i++) {
      if (bytes[ORG_TAG_AT + i] !== org[i]) return Result.fail(new CursorForeign())
    }
    writeQueryTag(context.queryFingerprint, queryTagBuffer, 0)
    for (let i = 0; i < QUERY_TAG_BYTES; i++) {
      if (bytes[QUERY_TAG_AT + i] !== queryTagBuffer[i]) return Result.fail(new CursorQueryMismatch())
    }
    const position = readPosition(bytes, signed)
    return position === undefined ? malformed("its position cannot be read") : Result.succeed(position)
  }

  return { encode, decode }
}

/**
 * A fingerprint of the parts of a list request that choose and order its rows.
 *
 * Pass everything except the paging fields (`limit`, `skip`, `pagination_key`): for list-contacts
 * `filter_criteria`, `search_query` and `sort_order`; for list-batch-tests `type`, `llm_id`,
 * `conversation_flow_id` and `version`. Include the resource name as well
 * (`{ resource: "contacts", ... }`) so a key from one list is refused by another. Fill defaults in
 * first (an absent `sort_order` and `"desc"` are the same query) and sort lists whose order carries
 * no meaning: the fingerprint sees JSON, not the meaning of the request.
 *
 * The value is serialized as canonical JSON (object keys sorted, so the order of keys in the request
 * does not matter), hashed with SHA-256 and cut to 6 bytes: 8 base64url characters.
 *
 * @category constructors
 */
export const queryFingerprint = (query: unknown): QueryFingerprint => {
  const digest = sha256(labelled("svc/pagination/query/v1", canonicalJson(query) ?? ""))
  return Base64Url.encode(digest, 0, QUERY_TAG_BYTES) as QueryFingerprint
}

/**
 * The direction of a listing; ties on the sort value are broken by id in the same direction, so the
 * order is total and a position is never ambiguous.
 *
 * @category models
 */
export type SortDirection = "asc" | "desc"

const compareSortValues = (a: SortValue, b: SortValue): -1 | 0 | 1 => {
  // Within one query every sort value has the same type; numbers first keeps the order total anyway.
  if (typeof a !== typeof b) return typeof a === "number" ? -1 : 1
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * The total order of positions in a listing sorted `direction` by `(sortValue, id)`. Strings compare
 * by UTF-16 code units; a store must order the same way (e.g. `COLLATE "C"` for ASCII ids).
 *
 * @category combinators
 */
export const keysetOrder = (direction: SortDirection): Order.Order<CursorPosition> => (self, that) => {
  const ascending = compareSortValues(self.sortValue, that.sortValue) ||
    (self.id < that.id ? -1 : self.id > that.id ? 1 : 0)
  return direction === "asc" ? ascending : ascending === 0 ? 0 : ascending === 1 ? -1 : 1
}

/**
 * The SQL-agnostic keyset condition for the page after `position`: rows whose `(sort value, id)`
 * tuple compares `operator` to `(sortValue, id)`, in row-value (lexicographic) comparison, ordered by
 * both columns in `direction`. A store renders it as `(sort, id) < ($1, $2) ORDER BY sort DESC, id
 * DESC`, which a composite index on `(org, sort, id)` answers without skipping rows.
 *
 * @category models
 */
export interface KeysetSeek {
  readonly direction: SortDirection
  readonly operator: "<" | ">"
  readonly sortValue: SortValue
  readonly id: string
}

/**
 * The condition selecting the rows after `position` in a listing sorted `direction`.
 *
 * @category constructors
 */
export const keysetSeek = (direction: SortDirection, position: CursorPosition): KeysetSeek => ({
  direction,
  operator: direction === "desc" ? "<" : ">",
  sortValue: position.sortValue,
  id: position.id
})

/**
 * Whether `candidate` comes strictly after `position` in a listing sorted `direction`: the
 * in-memory reading of {@link keysetSeek}, for test doubles and for checking a store.
 *
 * @category guards
 */
export const isAfter = (direction: SortDirection, position: CursorPosition, candidate: CursorPosition): boolean =>
  keysetOrder(direction)(candidate, position) > 0

/**
 * One page cut from rows fetched with `LIMIT limit + 1`: the first `limit` rows, whether more
 * exist, and the position of the last row returned (where the next key starts), if any.
 *
 * @category models
 */
export interface KeysetPage<A> {
  readonly items: ReadonlyArray<A>
  readonly hasMore: boolean
  readonly last: CursorPosition | undefined
}

/**
 * Cuts a page from `rows`, fetched in keyset order with one extra row so that `hasMore` needs no
 * count query.
 *
 * @category constructors
 */
export const keysetPage = <A>(
  rows: ReadonlyArray<A>,
  limit: number,
  positionOf: (row: A) => CursorPosition
): KeysetPage<A> => {
  const hasMore = rows.length > limit
  const items = hasMore ? rows.slice(0, Math.max(0, limit)) : rows
  return {
    items,
    hasMore,
    last: items.length > 0 ? positionOf(items[items.length - 1]!) : undefined
  }
}
