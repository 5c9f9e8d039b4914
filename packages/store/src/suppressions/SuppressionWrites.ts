/**
 * Writing one number onto an org's suppression (do-not-call) list (decision 0550), in the caller's transaction: the
 * API's create-suppression runs it alone, update-call's `opt_out` runs it inside the transaction that records the
 * call's field, so both commit together.
 *
 * Invariants:
 * - one row per `(org_id, phone_number)` (the table's primary key, which the claim probes): a number already on the
 *   list keeps its row as stored (first reason and source win) and is answered with `created: false`;
 * - `phone_number` is E.164, as tasks' `to_number` is stored, so the claim's equality probe finds it; the caller
 *   has validated it (the type says so);
 * - `created_timestamp` is the caller's `now` (from the `Clock`), epoch milliseconds.
 */
import type { E164 } from "@svc/domain/models/E164.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/**
 * A number on an org's suppression list, as stored.
 *
 * @category models
 */
export interface Suppression {
  readonly phone_number: E164
  readonly reason: string | null
  readonly source: string
  readonly created_timestamp: number
}

/**
 * What a write puts on the list.
 *
 * @category models
 */
export interface SuppressionInput {
  readonly orgId: OrgId
  readonly phoneNumber: E164
  readonly reason?: string | null | undefined
  readonly source: string
  readonly now: number
}

/**
 * The list's row and whether this write created it (`false`: the number was already suppressed; its row is
 * unchanged).
 *
 * @category models
 */
export interface SuppressionWritten {
  readonly suppression: Suppression
  readonly created: boolean
}

/** The default `source` of create-suppression (decision 0550). */
export const apiSource = "api"

/**
 * Puts `phoneNumber` on the org's list with `sql`, the caller's connection or transaction. Two statements, not
 * one: when a concurrent transaction inserted the number first, `ON CONFLICT` waits for it to commit, and only a
 * later statement's snapshot (READ COMMITTED) sees the row it committed.
 *
 * @category constructors
 */
export const insertSuppression = (
  sql: SqlClient.SqlClient,
  input: SuppressionInput
): Effect.Effect<SuppressionWritten> =>
  Effect.gen(function*() {
    const inserted = yield* sql<Suppression>`
      INSERT INTO suppressions (org_id, phone_number, reason, source, created_timestamp)
      VALUES (${input.orgId}, ${input.phoneNumber}, ${input.reason ?? null}, ${input.source}, ${input.now})
      ON CONFLICT (org_id, phone_number) DO NOTHING
      RETURNING phone_number, reason, source, created_timestamp::float8 AS created_timestamp`
    if (inserted[0] !== undefined) return { suppression: inserted[0], created: true }
    const stored = yield* sql<Suppression>`
      SELECT phone_number, reason, source, created_timestamp::float8 AS created_timestamp FROM suppressions
      WHERE org_id = ${input.orgId} AND phone_number = ${input.phoneNumber}`
    if (stored[0] !== undefined) return { suppression: stored[0], created: false }
    // the conflicting row was deleted between the two statements: this write is the one that stands now
    return yield* insertSuppression(sql, input)
  }).pipe(Effect.orDie)
