/**
 * Retries of create-batch-call (design: "retries of create-batch-call"; decision 0302): the record a create claims
 * before it writes its batch (its `Idempotency-Key`, or for a keyless retry the API key and body hash), so that a
 * retry finds the batch of the create it repeats; and the purge of records past their lifetime.
 */
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { Clock, Effect } from "effect"
import type { SqlClient } from "effect/sql"
import * as crypto from "node:crypto"
import { IdempotencyKeyReused } from "./BatchCallErrors.ts"
import type { CreateOptions } from "./BatchCallModels.ts"

/**
 * How long an `Idempotency-Key` names its batch (then the key may be used for a new one).
 *
 * @category models
 */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000

/**
 * How long after the previous attempt an identical keyless body marked as a retry returns the same batch. The
 * vendor client makes at most three attempts, each waiting up to its 300 s timeout before the next (delays up to
 * 8 s); measured from the previous attempt, a retry after a full timeout still falls inside the window.
 *
 * @category models
 */
export const RETRY_WINDOW_MS = 10 * 60 * 1000

/** The statements over idempotency records, on `sql`. */
export const make = (sql: SqlClient.SqlClient) => {
  /**
   * Claims the request's idempotency record, or finds the batch of the earlier create it repeats. The claim is
   * an insert on a primary key: a concurrent duplicate blocks on it until this transaction ends, then sees the
   * committed batch (or, after a rollback, claims the key itself).
   */
  const claim = Effect.fnUntraced(function*(
    orgId: OrgId,
    apiKeyId: string,
    batchCallId: BatchCallId,
    hash: Uint8Array,
    now: number,
    options: CreateOptions
  ) {
    const key = options.idempotencyKey
    // an empty header is no key
    if (key !== undefined && key !== "") {
      const keyHash = crypto.createHash("sha256").update(key).digest()
      const claimed = yield* sql`
        INSERT INTO batch_call_idempotency_keys AS k
          (org_id, key_hash, idempotency_key, request_hash, batch_call_id, created_timestamp)
        VALUES (${orgId}, ${keyHash}, ${key}, ${hash}, ${batchCallId}, ${now})
        ON CONFLICT (org_id, key_hash) DO UPDATE
          SET idempotency_key = EXCLUDED.idempotency_key, request_hash = EXCLUDED.request_hash,
            batch_call_id = EXCLUDED.batch_call_id, created_timestamp = EXCLUDED.created_timestamp
          WHERE k.created_timestamp <= ${now - IDEMPOTENCY_KEY_TTL_MS}
        RETURNING 1 AS claimed`
      if (claimed.length > 0) return undefined
      // ON CONFLICT locked the row even though it did not update it, so it is still there
      const [seen] = yield* sql<{ batch_call_id: BatchCallId; same: boolean }>`
        SELECT batch_call_id, request_hash = ${hash} AS same
        FROM batch_call_idempotency_keys WHERE org_id = ${orgId} AND key_hash = ${keyHash}`
      if (seen === undefined) return undefined
      if (!seen.same) {
        return yield* new IdempotencyKeyReused({
          idempotencyKey: key,
          message: "the Idempotency-Key was already used with a different request body; use a new key"
        })
      }
      return seen.batch_call_id
    }
    const isRetry = (options.retryCount ?? 0) > 0
    // A first attempt always records itself (it is the batch a later retry of it means); a retry takes over
    // the record only when the previous attempt is older than the retry window.
    const claimed = yield* sql`
      INSERT INTO batch_call_recent_requests AS r
        (api_key_id, request_hash, org_id, batch_call_id, seen_timestamp)
      VALUES (${apiKeyId}, ${hash}, ${orgId}, ${batchCallId}, ${now})
      ON CONFLICT (api_key_id, request_hash) DO UPDATE
        SET org_id = EXCLUDED.org_id, batch_call_id = EXCLUDED.batch_call_id,
          seen_timestamp = EXCLUDED.seen_timestamp
        WHERE ${!isRetry} OR r.seen_timestamp <= ${now - RETRY_WINDOW_MS}
      RETURNING 1 AS claimed`
    if (claimed.length > 0) return undefined
    // a repeat: the window runs from this attempt now, so the client's next retry, up to a full timeout
    // later, still finds the batch (the row is locked by the ON CONFLICT above)
    const [seen] = yield* sql<{ batch_call_id: BatchCallId }>`
      UPDATE batch_call_recent_requests SET seen_timestamp = ${now}
      WHERE api_key_id = ${apiKeyId} AND request_hash = ${hash} AND org_id = ${orgId}
      RETURNING batch_call_id`
    return seen?.batch_call_id
  })

  /**
   * Moves a keyless retry's window to this attempt, after the attempt's transaction was rolled back (the
   * claim's own update went with it), so that the client's next retry, up to a full timeout later, still
   * finds the batch.
   */
  const touchRecent = (orgId: OrgId, apiKeyId: string, hash: Uint8Array, now: number) =>
    Effect.orDie(sql`
      UPDATE batch_call_recent_requests SET seen_timestamp = GREATEST(seen_timestamp, ${now})
      WHERE api_key_id = ${apiKeyId} AND request_hash = ${hash} AND org_id = ${orgId}`)

  const purgeExpired = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const keys = yield* sql`
      DELETE FROM batch_call_idempotency_keys WHERE created_timestamp <= ${now - IDEMPOTENCY_KEY_TTL_MS}
      RETURNING 1 AS deleted`
    const recent = yield* sql`
      DELETE FROM batch_call_recent_requests WHERE seen_timestamp <= ${now - RETRY_WINDOW_MS}
      RETURNING 1 AS deleted`
    return keys.length + recent.length
  }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("BatchCallsRepo.purgeExpired"))

  return { claim, touchRecent, purgeExpired }
}

/** What `make` gives. */
export type Idempotency = ReturnType<typeof make>
