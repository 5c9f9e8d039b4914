/**
 * The calls API over `calls` (decisions 0510-0512; migration 0012): get, list, update metadata, delete, and a
 * contact's conversations. Every statement is scoped by `org_id`: another org's call is not found.
 *
 * list-calls orders by `(sort_timestamp, call_id)` (sort_timestamp: `start_timestamp`, or the registration time of
 * a call not started yet) and pages with the keys of decision 0102, bound to the org and the query; a key carries
 * the `total` of its first page, so later pages count nothing (as list-contacts). Each condition is a plain SQL
 * predicate on a column or a JSON member; which of them an index serves is decision 0511.
 */
import type { CallFilterCriteria, KeyedFilter, ListCallsRequest } from "@svc/domain/models/Call.ts"
import { E164 } from "@svc/domain/models/E164.ts"
import type { CallId, OrgId } from "@svc/domain/models/Ids.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { Context, Effect, Layer, Option, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CursorKeys } from "../db/CursorKeys.ts"
import { insertSuppression } from "../suppressions/index.ts"

/** @category errors */
export class CallNotFound extends Schema.TaggedError<CallNotFound>()("CallNotFound", { call_id: Schema.String }) {}

/** @category errors */
export class CallsPaginationKeyInvalid
  extends Schema.TaggedError<CallsPaginationKeyInvalid>()("CallsPaginationKeyInvalid", { message: Schema.String })
{}

/** @category errors */
export class CallInFlight extends Schema.TaggedError<CallInFlight>()("CallInFlight", { call_id: Schema.String }) {}

/**
 * `opt_out: true` on a call whose `to_number` is not E.164 (a task created with `ignore_e164_validation`): the
 * suppression list holds E.164 numbers only (decision 0550), so the opt-out cannot be recorded; nothing is written
 * (decision 0552).
 *
 * @category errors
 */
export class OptOutNotE164 extends Schema.TaggedError<OptOutNotE164>()("OptOutNotE164", {
  call_id: Schema.String,
  to_number: Schema.String
}) {}

/** @category models */
export interface CallsPage {
  readonly has_more: boolean
  readonly items: ReadonlyArray<Record<string, unknown>>
  readonly pagination_key?: string
  readonly total?: number
}

const asE164 = Schema.decodeUnknownOption(E164)

/** Accumulates bind parameters and hands out their placeholders. */
class Params {
  readonly values: Array<unknown> = []
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

type Condition = { readonly type: string; readonly op?: string | undefined; readonly value?: unknown }

/** A condition on a text expression. */
const onText = (expr: string, f: Condition, p: Params): string => {
  const v = () => p.add(f.value)
  switch (f.type) {
    case "string":
      switch (f.op) {
        case "ne":
          return `(${expr} IS DISTINCT FROM ${v()}::text)`
        case "sw":
          return `starts_with(${expr}, ${v()}::text)`
        case "ew": {
          const x = v()
          return `(right(${expr}, length(${x}::text)) = ${x}::text)`
        }
        case "co":
          return `(strpos(${expr}, ${v()}::text) > 0)`
        default:
          return `(${expr} = ${v()}::text)`
      }
    case "enum":
      return `(${expr} = ANY(${v()}::text[]))`
    case "present":
      return f.op === "np" ? `(${expr} IS NULL)` : `(${expr} IS NOT NULL)`
    default:
      // a number, boolean or range condition on a text value matches nothing
      return "false"
  }
}

/** A condition on a numeric expression. */
const onNumber = (expr: string, f: Condition, p: Params): string => {
  switch (f.type) {
    case "number": {
      const ops: Record<string, string> = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" }
      return `(${expr} ${ops[f.op ?? "eq"] ?? "="} ${p.add(f.value)}::numeric)`
    }
    case "range": {
      const [lo, hi] = f.value as [number, number]
      return `(${expr} BETWEEN ${p.add(lo)}::numeric AND ${p.add(hi)}::numeric)`
    }
    case "present":
      return f.op === "np" ? `(${expr} IS NULL)` : `(${expr} IS NOT NULL)`
    default:
      return "false"
  }
}

/** A condition on one key of a jsonb column, by the type of the condition. */
const onKey = (column: string, f: KeyedFilter, p: Params): string => {
  const key = p.add(f.key)
  const member = `${column} -> ${key}::text`
  switch (f.type) {
    case "number":
    case "range":
      return onNumber(`(CASE WHEN jsonb_typeof(${member}) = 'number' THEN (${member})::numeric END)`, f, p)
    case "boolean":
      return `(${member} = to_jsonb(${p.add(f.value)}::boolean))`
    case "present":
      return f.op === "np"
        ? `(${member} IS NULL OR ${member} = 'null'::jsonb)`
        : `(${member} IS NOT NULL AND ${member} <> 'null'::jsonb)`
    default:
      return onText(`(CASE WHEN jsonb_typeof(${member}) = 'string' THEN ${column} ->> ${key}::text END)`, f, p)
  }
}

const bool = (expr: string, f: { readonly value: boolean }, p: Params) =>
  `(${expr} = to_jsonb(${p.add(f.value)}::boolean))`

/** The WHERE conditions of `filter_criteria`, beside `c.org_id = $1`. */
export const conditions = (criteria: CallFilterCriteria | undefined, p: Params): Array<string> => {
  const where: Array<string> = []
  if (criteria === undefined) return where
  const c = criteria
  if (c.batch_call_id) where.push(onText("c.batch_call_id", c.batch_call_id, p))
  if (c.call_id) where.push(onText("c.call_id", c.call_id, p))
  if (c.agent && c.agent.length > 0) {
    where.push(`(${
      c.agent.map((a) =>
        a.version === undefined || a.version.length === 0
          ? `c.agent_id = ${p.add(a.agent_id)}::text`
          : `(c.agent_id = ${p.add(a.agent_id)}::text AND c.agent_version = ANY(${p.add(a.version)}::int8[]))`
      ).join(" OR ")
    })`)
  }
  if (c.call_status) where.push(onText("c.call_status", c.call_status, p))
  // every svc call is an outbound phone call
  if (c.call_type) where.push(c.call_type.value.includes("phone_call") ? "true" : "false")
  if (c.direction) where.push(c.direction.value.includes("outbound") ? "true" : "false")
  if (c.disconnection_reason) where.push(onText("c.disconnection_reason", c.disconnection_reason, p))
  if (c.call_successful) where.push(bool(`c.analysis -> 'call_successful'`, c.call_successful, p))
  if (c.in_voicemail) where.push(bool(`c.analysis -> 'in_voicemail'`, c.in_voicemail, p))
  if (c.user_sentiment) where.push(onText(`(c.analysis ->> 'user_sentiment')`, c.user_sentiment, p))
  if (c.from_number) where.push(onText("c.from_number", c.from_number, p))
  if (c.to_number) where.push(onText("c.to_number", c.to_number, p))
  // No bound on sort_timestamp is derived from a start_timestamp condition: migration 0015 (main) fixes a dialled
  // call's sort_timestamp at its registration, before its start, so the two no longer coincide (decision 0545).
  if (c.start_timestamp) where.push(onNumber("c.start_timestamp", c.start_timestamp, p))
  if (c.end_timestamp) where.push(onNumber("c.end_timestamp", c.end_timestamp, p))
  if (c.duration_ms) where.push(onNumber("c.duration_ms", c.duration_ms, p))
  for (const f of c.metadata ?? []) where.push(onKey("c.metadata", f, p))
  for (const f of c.dynamic_variables ?? []) where.push(onKey("c.dynamic_variables", f, p))
  for (const f of c.custom_analysis_data ?? []) where.push(onKey("c.analysis", f, p))
  return where
}

/**
 * The statements of one list-calls page: the page (limit + 1 rows) and, when asked, the count.
 *
 * @category encoding
 */
export const listStatements = (
  orgId: OrgId,
  request: ListCallsRequest,
  after: { readonly sortValue: number; readonly callId: string } | undefined
) => {
  const p = new Params()
  const where = [`c.org_id = ${p.add(orgId)}::text`, ...conditions(request.filter_criteria, p)]
  const countText = `SELECT count(*)::int8 AS total FROM calls c WHERE ${where.join(" AND ")}`
  const countParams = [...p.values]
  const desc = request.sort_order === "descending"
  if (after !== undefined) {
    where.push(
      `(c.sort_timestamp, c.call_id) ${desc ? "<" : ">"} (${p.add(after.sortValue)}::int8, ${
        p.add(after.callId)
      }::text)`
    )
  }
  const dir = desc ? "DESC" : "ASC"
  const offset = after === undefined && request.skip !== undefined && request.skip > 0
    ? ` OFFSET ${p.add(request.skip)}::int8`
    : ""
  const pageText = `SELECT call_json(c) AS call, c.sort_timestamp::float8 AS sort_timestamp FROM calls c
    WHERE ${where.join(" AND ")} ORDER BY c.sort_timestamp ${dir}, c.call_id ${dir}
    LIMIT ${p.add(request.limit + 1)}::int8${offset}`
  // A filter's plan depends on its values (a partial index is provable from a constant only; a batch of 50 calls
  // and one of 200,000 want different counts): filtered statements run unprepared, as list-contacts' do
  // (ContactsQuery), since a prepared statement may switch to a generic plan after five runs.
  const custom = where.length > 1 + (after === undefined ? 0 : 1)
  return {
    page: { text: pageText, params: p.values },
    count: { text: countText, params: countParams },
    custom
  }
}

/**
 * The fingerprint a list-calls key is bound to: what selects and orders the rows (decision 0102).
 *
 * @category encoding
 */
export const fingerprint = (request: ListCallsRequest): Pagination.QueryFingerprint =>
  Pagination.queryFingerprint({
    resource: "calls",
    filter_criteria: request.filter_criteria ?? {},
    sort_order: request.sort_order
  })

const keyId = (callId: string, total: number | undefined) => `${total ?? ""}:${callId}`
const readKeyId = (id: string) => {
  const colon = id.indexOf(":")
  if (colon < 0) return undefined
  const total = id.slice(0, colon)
  return { total: total === "" ? undefined : Number(total), callId: id.slice(colon + 1) }
}

const badKey = new CallsPaginationKeyInvalid({
  message: "pagination_key is not a list-calls key; pass the pagination_key of the previous response unchanged, " +
    "or start again without pagination_key"
})

/**
 * The calls API's reads and writes.
 *
 * @category services
 */
export class CallsApiRepo extends Context.Service<CallsApiRepo, {
  readonly get: (orgId: OrgId, callId: CallId) => Effect.Effect<Record<string, unknown>, CallNotFound>
  readonly list: (orgId: OrgId, request: ListCallsRequest) => Effect.Effect<CallsPage, CallsPaginationKeyInvalid>
  /**
   * Replaces the call's metadata (when given); returns the call. A call still registered or ongoing is refused:
   * since 2026-08-31 update-call is for ended calls only (spec deprecation schedule, row 8). `opt_out` (decision
   * 0552) sets the call's field and, when true, puts its `to_number` on the org's suppression list (source `opt_out`,
   * created at `now`) in the same transaction; a body of `opt_out` alone is taken at any status.
   */
  readonly update: (
    orgId: OrgId,
    callId: CallId,
    body: { readonly metadata?: unknown; readonly opt_out?: boolean },
    now: number
  ) => Effect.Effect<Record<string, unknown>, CallNotFound | CallInFlight | OptOutNotE164>
  /** Deletes a finished call; a call still registered or ongoing is refused (its dial would write it back). */
  readonly remove: (orgId: OrgId, callId: CallId) => Effect.Effect<void, CallNotFound | CallInFlight>
  /** The calls to `phoneNumber`, newest first, as contact conversation items, keyset-paged. */
  readonly conversations: (
    orgId: OrgId,
    phoneNumber: string,
    limit: number,
    after: { readonly sortValue: number; readonly callId: string } | undefined
  ) => Effect.Effect<
    {
      readonly items: ReadonlyArray<Record<string, unknown>>
      readonly hasMore: boolean
      readonly last: { readonly sortValue: number; readonly callId: string } | undefined
    }
  >
}>()("@svc/store/CallsApiRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<CallsApiRepo, never, SqlClient.SqlClient | CursorKeys> = Layer.effect(
    CallsApiRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cursors = yield* CursorKeys

      const get = (orgId: OrgId, callId: CallId) =>
        sql<{ call: Record<string, unknown> }>`
          SELECT call_json(c) AS call FROM calls c WHERE c.org_id = ${orgId} AND c.call_id = ${callId}`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) =>
            rows[0] === undefined ? Effect.fail(new CallNotFound({ call_id: callId })) : Effect.succeed(rows[0].call)
          ),
          Effect.withSpan("CallsApiRepo.get")
        )

      const list = Effect.fn("CallsApiRepo.list")(function*(orgId: OrgId, request: ListCallsRequest) {
        const context: Pagination.CursorContext = { orgId, queryFingerprint: fingerprint(request) }
        let after: { sortValue: number; callId: string } | undefined
        let carried: number | undefined
        if (request.pagination_key !== undefined) {
          const decoded = cursors.decode(request.pagination_key, context)
          if (Result.isFailure(decoded)) {
            return yield* new CallsPaginationKeyInvalid({ message: decoded.failure.message })
          }
          const id = readKeyId(decoded.success.id)
          if (typeof decoded.success.sortValue !== "number" || id === undefined) return yield* badKey
          after = { sortValue: decoded.success.sortValue, callId: id.callId }
          carried = id.total
        }
        const statements = listStatements(orgId, request, after)
        const run = <A extends object>(statement: { readonly text: string; readonly params: Array<unknown> }) => {
          const query = sql.unsafe<A>(statement.text, statement.params as Array<never>)
          return statements.custom ? query.unprepared : query
        }
        const page = run<{ call: Record<string, unknown>; sort_timestamp: number }>(statements.page)
        const wantCount = request.include_total && carried === undefined
        const [rows, counted] = wantCount
          ? yield* Effect.all([page, run<{ total: string }>(statements.count)], { concurrency: 2 }).pipe(Effect.orDie)
          : [yield* Effect.orDie(page), undefined]
        const total = request.include_total ? (carried ?? Number(counted?.[0]?.total ?? 0)) : undefined
        const hasMore = rows.length > request.limit
        const items = hasMore ? rows.slice(0, request.limit) : rows
        const last = items[items.length - 1]
        return {
          has_more: hasMore,
          items: items.map((r) => r.call),
          ...(hasMore && last !== undefined
            ? {
              pagination_key: cursors.encode(
                { sortValue: last.sort_timestamp, id: keyId(String(last.call["call_id"]), total) },
                context
              )
            }
            : {}),
          ...(total === undefined ? {} : { total })
        }
      })

      // one statement: the status check and the write see the same row version, so a call that ends meanwhile is
      // either still in progress here (refused) or ended (updated), never updated while in progress
      const updateMetadata = (orgId: OrgId, callId: CallId, body: { readonly metadata?: unknown }) =>
        sql<{ call: Record<string, unknown> | null; status: string }>`
          WITH found AS (
            SELECT call_status FROM calls WHERE org_id = ${orgId} AND call_id = ${callId}
          ), updated AS (
            ${
          body.metadata === undefined
            ? sql`SELECT call_json(c) AS call FROM calls c WHERE c.org_id = ${orgId} AND c.call_id = ${callId}
                AND c.call_status NOT IN ('registered', 'ongoing')`
            : sql`UPDATE calls c SET metadata = ${JSON.stringify(body.metadata)}::jsonb
                WHERE c.org_id = ${orgId} AND c.call_id = ${callId} AND c.call_status NOT IN ('registered', 'ongoing')
                RETURNING call_json(c) AS call`
        }
          )
          SELECT (SELECT call FROM updated) AS call, call_status AS status FROM found`.pipe(
          Effect.orDie,
          Effect.flatMap((rows): Effect.Effect<Record<string, unknown>, CallNotFound | CallInFlight> =>
            rows[0] === undefined
              ? Effect.fail(new CallNotFound({ call_id: callId }))
              : rows[0].call === null
              ? Effect.fail(new CallInFlight({ call_id: callId }))
              : Effect.succeed(rows[0].call)
          ),
          Effect.withSpan("CallsApiRepo.update")
        )

      // Decision 0552: the call's field and the suppression commit together or not at all. The row is locked first,
      // so the status and number judged here are the ones the update writes to (a concurrent finish waits). Only the
      // vendor's members are bound by the ended-calls rule: an opt-out is heard while the call is in progress, and
      // the agent runtime reporting it then must not lose it
      const updateOptOut = (
        orgId: OrgId,
        callId: CallId,
        body: { readonly metadata?: unknown },
        optOut: boolean,
        now: number
      ) =>
        sql.withTransaction(Effect.gen(function*() {
          const [found] = yield* sql<{ call_status: string; to_number: string }>`
            SELECT call_status, to_number FROM calls WHERE org_id = ${orgId} AND call_id = ${callId} FOR UPDATE`
          if (found === undefined) return yield* new CallNotFound({ call_id: callId })
          const inProgress = found.call_status === "registered" || found.call_status === "ongoing"
          if (body.metadata !== undefined && inProgress) return yield* new CallInFlight({ call_id: callId })
          const number = asE164(found.to_number)
          if (optOut && Option.isNone(number)) {
            return yield* new OptOutNotE164({ call_id: callId, to_number: found.to_number })
          }
          const metadata = body.metadata === undefined ? null : JSON.stringify(body.metadata)
          const [row] = yield* sql<{ call: Record<string, unknown> }>`
            UPDATE calls c SET opt_out = ${optOut},
              metadata = CASE WHEN ${metadata !== null} THEN ${metadata}::jsonb ELSE c.metadata END
            WHERE c.org_id = ${orgId} AND c.call_id = ${callId}
            RETURNING call_json(c) AS call`
          if (optOut && Option.isSome(number)) {
            yield* insertSuppression(sql, {
              orgId,
              phoneNumber: number.value,
              reason: `opted out during call ${callId}`,
              source: "opt_out",
              now
            })
          }
          return row!.call
        })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CallsApiRepo.update"))

      const update = (
        orgId: OrgId,
        callId: CallId,
        body: { readonly metadata?: unknown; readonly opt_out?: boolean },
        now: number
      ) =>
        body.opt_out === undefined
          ? updateMetadata(orgId, callId, body)
          : updateOptOut(orgId, callId, body, body.opt_out, now)

      const remove = (orgId: OrgId, callId: CallId) =>
        sql<{ deleted: boolean; status: string }>`
          WITH found AS (
            SELECT call_status FROM calls WHERE org_id = ${orgId} AND call_id = ${callId}
          ), deleted AS (
            DELETE FROM calls WHERE org_id = ${orgId} AND call_id = ${callId}
              AND call_status NOT IN ('registered', 'ongoing')
            RETURNING 1
          )
          SELECT EXISTS (SELECT 1 FROM deleted) AS deleted, call_status AS status FROM found`.pipe(
          Effect.orDie,
          Effect.flatMap((rows): Effect.Effect<void, CallNotFound | CallInFlight> =>
            rows[0] === undefined
              ? Effect.fail(new CallNotFound({ call_id: callId }))
              : rows[0].deleted
              ? Effect.void
              : Effect.fail(new CallInFlight({ call_id: callId }))
          ),
          Effect.withSpan("CallsApiRepo.remove")
        )

      const conversations = (
        orgId: OrgId,
        phoneNumber: string,
        limit: number,
        after: { readonly sortValue: number; readonly callId: string } | undefined
      ) =>
        sql<{ item: Record<string, unknown>; sort_timestamp: number; call_id: string }>`
          SELECT json_object(
              'type': 'call', 'call_id': c.call_id, 'direction': 'outbound',
              'disconnection_reason': c.disconnection_reason, 'duration_ms': c.duration_ms,
              'start_timestamp': c.start_timestamp,
              'sentiment': CASE WHEN c.analysis ->> 'user_sentiment' IN ('Negative', 'Positive', 'Neutral', 'Unknown')
                THEN c.analysis -> 'user_sentiment' END,
              'successful': CASE WHEN jsonb_typeof(c.analysis -> 'call_successful') = 'boolean'
                THEN c.analysis -> 'call_successful' END,
              'summary': CASE WHEN jsonb_typeof(c.analysis -> 'call_summary') = 'string'
                THEN c.analysis -> 'call_summary' END
              ABSENT ON NULL RETURNING jsonb) AS item,
            c.sort_timestamp::float8 AS sort_timestamp, c.call_id
          FROM calls c
          WHERE c.org_id = ${orgId} AND c.to_number = ${phoneNumber}
            ${
          after === undefined
            ? sql``
            : sql`AND (c.sort_timestamp, c.call_id) < (${after.sortValue}::int8, ${after.callId}::text)`
        }
          ORDER BY c.sort_timestamp DESC, c.call_id DESC
          LIMIT ${limit + 1}`.pipe(
          Effect.orDie,
          Effect.map((rows) => {
            const hasMore = rows.length > limit
            const items = hasMore ? rows.slice(0, limit) : rows
            const last = items[items.length - 1]
            return {
              items: items.map((r) => r.item),
              hasMore,
              last: last === undefined ? undefined : { sortValue: last.sort_timestamp, callId: last.call_id }
            }
          }),
          Effect.withSpan("CallsApiRepo.conversations")
        )

      return CallsApiRepo.of({ get, list, update, remove, conversations })
    })
  )
}
