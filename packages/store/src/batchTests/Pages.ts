/**
 * What the batch-test repositories share to list a page with signed keyset keys (decision 0102): the refusal of a
 * key that does not decode for the query, the list method's type, and the services a listing repository reads.
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import type * as Pagination from "@svc/domain/Pagination.ts"
import { Effect, type Effect as E, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CursorKeys } from "../db/CursorKeys.ts"

/** @category errors */
export class InvalidPaginationKey extends Schema.TaggedError<InvalidPaginationKey>()("InvalidPaginationKey", {
  message: Schema.String
}) {}

/** A list method: one org's page for a query, or a refused `pagination_key`. @category models */
export type PagedList<Query, Page> = (orgId: OrgId, query: Query) => E.Effect<Page, InvalidPaginationKey>

/** The database and the key codec a listing repository is built on. @category services */
export const listing = Effect.all({ sql: SqlClient.SqlClient, cursors: CursorKeys })

/**
 * The position a `pagination_key` resumes after (undefined: the first page); a key minted for another org or query,
 * or tampered with, is refused naming why.
 *
 * @category encoding
 */
export const resumeAfter = (
  cursors: Pagination.CursorCodec,
  key: string | undefined,
  context: Pagination.CursorContext
): E.Effect<Pagination.CursorPosition | undefined, InvalidPaginationKey> => {
  if (key === undefined) return Effect.succeed(undefined)
  const decoded = cursors.decode(key, context)
  return Result.isFailure(decoded)
    ? Effect.fail(new InvalidPaginationKey({ message: `pagination_key: ${decoded.failure.message}` }))
    : Effect.succeed(decoded.success)
}
