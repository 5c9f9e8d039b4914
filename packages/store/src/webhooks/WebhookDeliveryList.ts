/**
 * The org's webhook deliveries for `POST /list-webhook-deliveries` (an svc extension, decision 0800; docs/api.md), read
 * from the outbox (`webhook_events`, decisions 0520 and 0524): each event with its state, its last attempts (the row
 * keeps the newest 10, `history`), and the time of its next attempt while it is retried.
 *
 * Order: failing deliveries first, then the rest, each newest first (`event_seq` descending). A delivery is failing
 * when it was given up (`failed`), refused for good (`gone`, HTTP 410), or is waiting for a retry after an attempt
 * that failed (`pending` with a last status or error). Pages are keyset pages on (failing first, event_seq), with the
 * signed keys of decision 0102 bound to the org and the filters.
 *
 * Cost: the statement reads the org's rows through `webhook_events_call` (org_id, call_id, event_seq) and sorts
 * them: with a `call_id` filter that is a few rows; without one, every event the org has kept (7 days by default,
 * `SVC_WEBHOOK_RETENTION_DAYS`). An index on (org_id, failing, event_seq) would make the unfiltered page a walk of
 * its own rows; it is not added here (the webhook tables are being partitioned at the same time: docs/api.md).
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CursorKeys } from "../db/CursorKeys.ts"

/** The `pagination_key` does not name a page of this list (altered, another org's, other filters). @category errors */
export class DeliveryListKeyInvalid extends Schema.TaggedError<DeliveryListKeyInvalid>()("DeliveryListKeyInvalid", {
  message: Schema.String
}) {}

/** One attempt, as the outbox keeps it (decision 0524: `{at, status?, error?, ms}`). @category models */
export interface DeliveryAttemptRow {
  readonly attempted_timestamp: number
  readonly status_code: number | null
  readonly error: string | null
  readonly duration_ms: number
}

/** @category models */
export interface DeliveryRow {
  readonly event_id: string
  readonly call_id: string
  readonly event: string
  readonly url: string
  readonly state: "pending" | "delivered" | "gone" | "failed"
  readonly failing: boolean
  readonly attempt_count: number
  readonly attempts: ReadonlyArray<DeliveryAttemptRow>
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly next_retry_timestamp: number | null
  readonly finished_timestamp: number | null
  readonly created_timestamp: number
}

/** @category models */
export interface DeliveryQuery {
  readonly limit: number
  readonly callIds: ReadonlyArray<string> | undefined
  readonly states: ReadonlyArray<string> | undefined
  readonly paginationKey: string | undefined
}

/** @category models */
export interface DeliveryPage {
  readonly has_more: boolean
  readonly items: ReadonlyArray<DeliveryRow>
  readonly pagination_key?: string
}

/** The fingerprint a key is bound to: the filters (sorted, so their order does not matter). @category encoding */
export const deliveriesFingerprint = (query: DeliveryQuery): Pagination.QueryFingerprint =>
  Pagination.queryFingerprint({
    resource: "webhook_deliveries",
    call_ids: query.callIds === undefined ? null : [...query.callIds].sort(),
    states: query.states === undefined ? null : [...query.states].sort()
  })

const attemptOf = (value: unknown): DeliveryAttemptRow => {
  const a = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>
  return {
    attempted_timestamp: typeof a["at"] === "number" ? a["at"] : 0,
    status_code: typeof a["status"] === "number" ? a["status"] : null,
    error: typeof a["error"] === "string" ? a["error"] : null,
    duration_ms: typeof a["ms"] === "number" ? a["ms"] : 0
  }
}

interface Row {
  readonly event_seq: string
  readonly event_id: string
  readonly call_id: string
  readonly event: string
  readonly url: string
  readonly state: DeliveryRow["state"]
  readonly attempts: number
  readonly last_status: number | null
  readonly last_error: string | null
  readonly due_at: string
  readonly finished_at: string | null
  readonly history: ReadonlyArray<unknown>
  readonly created: string
  readonly rank: number
}

/**
 * Lists an org's webhook deliveries, failing first.
 *
 * @category services
 */
export class WebhookDeliveryList extends Context.Service<WebhookDeliveryList, {
  readonly list: (orgId: OrgId, query: DeliveryQuery) => Effect.Effect<DeliveryPage, DeliveryListKeyInvalid>
}>()("@svc/store/WebhookDeliveryList") {
  /** @category layers */
  static readonly layer: Layer.Layer<WebhookDeliveryList, never, SqlClient.SqlClient | CursorKeys> = Layer.effect(
    WebhookDeliveryList,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cursors = yield* CursorKeys

      const list = Effect.fn("WebhookDeliveryList.list")(function*(orgId: OrgId, query: DeliveryQuery) {
        const context = { orgId, queryFingerprint: deliveriesFingerprint(query) }
        let after: { readonly rank: number; readonly seq: string } | undefined
        if (query.paginationKey !== undefined) {
          const decoded = cursors.decode(query.paginationKey, context)
          if (Result.isFailure(decoded)) return yield* new DeliveryListKeyInvalid({ message: decoded.failure.message })
          const { id, sortValue } = decoded.success
          if ((sortValue !== 0 && sortValue !== 1) || !/^\d{1,18}$/.test(id)) {
            return yield* new DeliveryListKeyInvalid({
              message: "pagination_key is not a list-webhook-deliveries key; pass the pagination_key of the previous " +
                "response unchanged, or start again without pagination_key"
            })
          }
          after = { rank: sortValue, seq: id }
        }
        const rows = yield* sql<Row>`
          SELECT * FROM (
            SELECT event_seq::text, event_id, call_id, event, url, state, attempts, last_status, last_error,
                   due_at::text, finished_at::text, history,
                   (extract(epoch FROM enqueued_at) * 1000)::int8::text AS created,
                   -- failing first: given up, gone (410), or waiting for a retry after a failed attempt
                   CASE WHEN state IN ('failed', 'gone')
                          OR (state = 'pending' AND (last_status IS NOT NULL OR last_error IS NOT NULL))
                        THEN 0 ELSE 1 END AS rank
            FROM webhook_events
            WHERE org_id = ${orgId}
              ${query.callIds === undefined ? sql`` : sql`AND call_id = ANY(${query.callIds}::text[])`}
              ${query.states === undefined ? sql`` : sql`AND state = ANY(${query.states}::text[])`}
          ) e
          ${
          after === undefined
            ? sql``
            : sql`WHERE e.rank > ${after.rank} OR (e.rank = ${after.rank} AND e.event_seq::int8 < ${after.seq}::int8)`
        }
          ORDER BY e.rank, e.event_seq::int8 DESC
          LIMIT ${query.limit + 1}`.pipe(Effect.orDie)
        const page = Pagination.keysetPage(rows, query.limit, (r) => ({ sortValue: r.rank, id: r.event_seq }))
        return {
          has_more: page.hasMore,
          items: page.items.map((r): DeliveryRow => ({
            event_id: r.event_id,
            call_id: r.call_id,
            event: r.event,
            url: r.url,
            state: r.state,
            failing: r.rank === 0,
            attempt_count: r.attempts,
            attempts: r.history.map(attemptOf),
            last_status_code: r.last_status,
            last_error: r.last_error,
            // due_at 0 is "due at once" (an event never tried yet)
            next_retry_timestamp: r.state === "pending" ? Math.max(Number(r.due_at), Number(r.created)) : null,
            finished_timestamp: r.finished_at === null ? null : Number(r.finished_at),
            created_timestamp: Number(r.created)
          })),
          ...(page.hasMore && page.last !== undefined ? { pagination_key: cursors.encode(page.last, context) } : {})
        }
      })

      return WebhookDeliveryList.of({ list })
    })
  )
}
