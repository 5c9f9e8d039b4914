/**
 * An org's suppression list through the API (decision 0550): `POST /create-suppression`, `POST /list-suppressions`,
 * `DELETE /delete-suppression/{phone_number}`.
 *
 * Invariants:
 * - every statement is scoped by `org_id`: another org's number is not found, its rows never listed;
 * - create is {@link insertSuppression} alone: a number already listed is answered as stored (`created: false`);
 * - a page walks the primary key `(org_id, phone_number)` in number order (the claim's probe key, so the list needs
 *   no index of its own and a 10,000,000-number import maintains one index); `search` is a prefix of the E.164 form,
 *   one range of the same key: `[prefix, prefix with its last digit + 1)` in the database's code-point order
 *   (builtin C.UTF-8, EmbeddedPostgres' initdb);
 * - pagination keys are the signed keys of decision 0102, bound to the org and to `search` and `sort_order`; the
 *   sort value and id are the page's last number.
 */
import type { E164 } from "@svc/domain/models/E164.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import type { CreateSuppressionRequest, ListSuppressionsRequest } from "@svc/domain/models/Suppression.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CursorKeys } from "../db/CursorKeys.ts"
import { insertSuppression, type Suppression, type SuppressionWritten } from "./SuppressionWrites.ts"

/**
 * The number is not on the org's list.
 *
 * @category errors
 */
export class SuppressionNotFound extends Schema.TaggedError<SuppressionNotFound>()("SuppressionNotFound", {
  phone_number: Schema.String,
  message: Schema.String
}) {}

/**
 * A `pagination_key` refused: not ours, altered, another org's or another query's. The message names the field.
 *
 * @category errors
 */
export class SuppressionKeyInvalid extends Schema.TaggedError<SuppressionKeyInvalid>()("SuppressionKeyInvalid", {
  message: Schema.String
}) {}

/** @category models */
export interface SuppressionsPage {
  readonly has_more: boolean
  readonly items: ReadonlyArray<Suppression>
  readonly pagination_key?: string
}

/** A statement and its parameters (the plan tests explain the same). */
export interface Statement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
}

/**
 * The E.164 prefix `search` means: its digits after a `+`.
 *
 * @category encoding
 */
export const searchPrefix = (search: string): string => search.startsWith("+") ? search : `+${search}`

/**
 * The end of the range of numbers beginning with `prefix` (exclusive): the prefix with its last character's code
 * point + 1 (`+1415` → `+1416`, `+1419` → `+141:`), which in code-point order follows every string beginning with
 * the prefix and nothing else.
 *
 * @category encoding
 */
export const prefixEnd = (prefix: string): string =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)

/**
 * The statement of one list-suppressions page: limit + 1 numbers after `after` in the request's order.
 *
 * @category encoding
 */
export const listStatement = (
  orgId: OrgId,
  request: ListSuppressionsRequest,
  after: string | undefined
): Statement => {
  const params: Array<unknown> = [orgId]
  const add = (value: unknown) => {
    params.push(value)
    return `$${params.length}::text`
  }
  const where = ["s.org_id = $1::text"]
  if (request.search !== undefined) {
    const prefix = searchPrefix(request.search)
    where.push(`s.phone_number >= ${add(prefix)}`, `s.phone_number < ${add(prefixEnd(prefix))}`)
  }
  const desc = request.sort_order === "descending"
  if (after !== undefined) where.push(`s.phone_number ${desc ? "<" : ">"} ${add(after)}`)
  params.push(request.limit + 1)
  return {
    text: `SELECT s.phone_number, s.reason, s.source, s.created_timestamp::float8 AS created_timestamp
      FROM suppressions s WHERE ${where.join(" AND ")}
      ORDER BY s.phone_number ${desc ? "DESC" : "ASC"} LIMIT $${params.length}::int8`,
    params
  }
}

/**
 * The fingerprint a list-suppressions key is bound to (decision 0102): what selects and orders the numbers.
 *
 * @category encoding
 */
export const listFingerprint = (request: ListSuppressionsRequest): Pagination.QueryFingerprint =>
  Pagination.queryFingerprint({
    resource: "suppressions",
    search: request.search === undefined ? null : searchPrefix(request.search),
    sort_order: request.sort_order
  })

/**
 * The org's suppression list, for the API.
 *
 * @category services
 */
export class SuppressionsRepo extends Context.Service<SuppressionsRepo, {
  readonly create: (
    orgId: OrgId,
    request: CreateSuppressionRequest,
    now: number
  ) => Effect.Effect<SuppressionWritten>
  readonly list: (
    orgId: OrgId,
    request: ListSuppressionsRequest
  ) => Effect.Effect<SuppressionsPage, SuppressionKeyInvalid>
  readonly delete: (orgId: OrgId, phoneNumber: E164) => Effect.Effect<void, SuppressionNotFound>
}>()("@svc/store/SuppressionsRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<SuppressionsRepo, never, SqlClient.SqlClient | CursorKeys> = Layer.effect(
    SuppressionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cursors = yield* CursorKeys

      const create = Effect.fn("SuppressionsRepo.create")(
        function*(orgId: OrgId, request: CreateSuppressionRequest, now: number) {
          return yield* insertSuppression(sql, {
            orgId,
            phoneNumber: request.phone_number,
            reason: request.reason ?? null,
            source: request.source,
            now
          })
        }
      )

      const list = Effect.fn("SuppressionsRepo.list")(function*(orgId: OrgId, request: ListSuppressionsRequest) {
        const context = { orgId, queryFingerprint: listFingerprint(request) }
        let after: string | undefined
        if (request.pagination_key !== undefined) {
          const decoded = cursors.decode(request.pagination_key, context)
          if (Result.isFailure(decoded)) {
            return yield* new SuppressionKeyInvalid({ message: decoded.failure.message })
          }
          // every key of this list is a number's: its sort value and id are the number
          if (typeof decoded.success.sortValue !== "string" || decoded.success.sortValue !== decoded.success.id) {
            return yield* new SuppressionKeyInvalid({
              message: "pagination_key is not a list-suppressions key; pass the pagination_key of the previous " +
                "response unchanged, or start again without pagination_key"
            })
          }
          after = decoded.success.id
        }
        const statement = listStatement(orgId, request, after)
        const rows = yield* sql.unsafe<Suppression>(statement.text, statement.params as Array<never>).pipe(
          Effect.orDie
        )
        const page = Pagination.keysetPage(
          rows,
          request.limit,
          (r) => ({ sortValue: r.phone_number, id: r.phone_number })
        )
        return {
          has_more: page.hasMore,
          items: page.items,
          ...(page.hasMore && page.last !== undefined ? { pagination_key: cursors.encode(page.last, context) } : {})
        }
      })

      const remove = Effect.fn("SuppressionsRepo.delete")(function*(orgId: OrgId, phoneNumber: E164) {
        const deleted = yield* sql`
          DELETE FROM suppressions WHERE org_id = ${orgId} AND phone_number = ${phoneNumber} RETURNING 1 AS one`.pipe(
          Effect.orDie
        )
        if (deleted.length === 0) {
          return yield* new SuppressionNotFound({
            phone_number: phoneNumber,
            message: `phone_number ${phoneNumber} is not on the suppression list`
          })
        }
      })

      return SuppressionsRepo.of({ create, list, delete: remove })
    })
  )
}
