/**
 * Extensions the contacts search relies on: `pg_trgm` serves the case-insensitive substring search
 * (spec: list-contacts `search_query`) from a trigram index; `btree_gin` lets one GIN index mix
 * scalar and trigram columns.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
  yield* sql`CREATE EXTENSION IF NOT EXISTS btree_gin`
})
