/**
 * `POST /create-batch-call` in the database (decisions 0302, 0303): the checks that need it (the `from_number` is
 * the org's, every override agent exists in the org), then the batch, its tasks (one bulk statement a chunk) and its
 * legal groups in one transaction, or the batch of the earlier create a retry repeats (Idempotency).
 */
import { canonicalize } from "@svc/domain/CallWindow.ts"
import type { LegalGroup } from "@svc/domain/compliance/LegalGroups.ts"
import type { ContactLocation } from "@svc/domain/compliance/RecipientZones.ts"
import { BatchCall, type CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallId, type OrgId } from "@svc/domain/models/Ids.ts"
import { defaultSpacingMs } from "@svc/domain/models/RetryPolicy.ts"
import { Clock, Data, Effect, Stream } from "effect"
import type { SqlClient } from "effect/sql"
import * as crypto from "node:crypto"
import {
  AgentNotFound,
  type CreateBatchCallError,
  FromNumberNotOwned,
  NoTasks,
  TooManyTasks,
  UnstorableText
} from "./BatchCallErrors.ts"
import {
  CHUNK_TASKS,
  type CreateBatchCallHead,
  type CreateBatchCallSource,
  CREATED_CHANNEL,
  type CreateOptions
} from "./BatchCallModels.ts"
import type { BatchCallReads } from "./BatchCallReads.ts"
import type { Idempotency } from "./Idempotency.ts"
import {
  type AgentUses,
  column,
  findUnstorableHead,
  INT4_MAX,
  int8,
  type TaskColumns,
  TaskPreparer,
  unstorable
} from "./TaskPreparer.ts"

const chunksOf = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const chunks: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size))
  return chunks
}

/**
 * A retry of an earlier create: its batch. Fails the transaction so that this attempt's tasks are rolled back;
 * `keylessHash` is set when the retry window must then be moved to this attempt (the claim's update went too).
 */
class EarlierBatch extends Data.TaggedError("BatchCallsRepo/EarlierBatch")<{
  readonly batch: BatchCall
  readonly keylessHash: Uint8Array | undefined
  readonly now: number
}> {}

/** The source failed; carried through the transaction so that it rolls back, then failed with as is. */
class SourceFailed extends Data.TaggedError("BatchCallsRepo/SourceFailed")<{ readonly error: unknown }> {}

/** A random, unguessable batch id: 128 bits. */
const newBatchCallId = (): BatchCallId => BatchCallId.make(`batch_call_${crypto.randomBytes(16).toString("hex")}`)

/** The create's statements, on `sql`, with the idempotency records of `idempotency` and the reads of `reads`. */
export const make = (sql: SqlClient.SqlClient, idempotency: Idempotency, reads: BatchCallReads) => {
  const { claim, touchRecent } = idempotency
  const { selectBatch } = reads

  const checkFromNumber = Effect.fnUntraced(function*(orgId: OrgId, fromNumber: string) {
    const owned = yield* sql`
      SELECT 1 AS owned FROM phone_numbers WHERE org_id = ${orgId} AND phone_number = ${fromNumber}`
    if (owned.length === 0) {
      return yield* new FromNumberNotOwned({
        fromNumber,
        message: `from_number ${fromNumber} is not a phone number of this account`
      })
    }
  })

  const checkAgents = Effect.fnUntraced(function*(orgId: OrgId, agents: AgentUses) {
    if (agents.length === 0) return
    // agents.version is an int4: a larger version cannot exist, and would not bind as an int4 array element
    const queried = agents.filter((a) => a.version <= INT4_MAX)
    const missing = new Set<number>(agents.filter((a) => a.version > INT4_MAX).map((a) => a.taskIndex))
    if (queried.length > 0) {
      const rows = yield* sql<{ task_index: number }>`
        SELECT r.task_index
        FROM unnest(
          ${queried.map((a) => a.agentId)}::text[],
          ${queried.map((a) => a.version)}::int4[],
          ${queried.map((a) => a.taskIndex)}::int4[]
        ) AS r(agent_id, version, task_index)
        WHERE NOT EXISTS (
          SELECT 1 FROM agents a
          WHERE a.org_id = ${orgId} AND a.agent_id = r.agent_id AND (r.version < 0 OR a.version = r.version)
        )`
      for (const row of rows) missing.add(row.task_index)
    }
    if (missing.size === 0) return
    const first = agents.find((a) => missing.has(a.taskIndex))!
    const versioned = first.version >= 0
    return yield* new AgentNotFound({
      agentId: first.agentId,
      ...(versioned ? { version: first.version } : {}),
      taskIndex: first.taskIndex,
      message: `tasks[${first.taskIndex}].override_agent_id ${JSON.stringify(first.agentId)}` +
        (versioned ? ` version ${first.version}` : "") + " is not an agent of this account"
    })
  })

  const insertBatch = Effect.fnUntraced(function*(
    orgId: OrgId,
    apiKeyId: string,
    head: CreateBatchCallHead,
    batch: BatchCall,
    now: number
  ) {
    const window = batch.call_time_window === undefined ? null : JSON.stringify(batch.call_time_window)
    // the retry policy with its spacing filled in (decision 0625): what the recorder reads is complete
    const retry = head.retry_policy === undefined ? null : JSON.stringify({
      max_retries: head.retry_policy.max_retries,
      retry_on: [...new Set(head.retry_policy.retry_on)],
      min_spacing_ms: head.retry_policy.min_spacing_ms ?? defaultSpacingMs
    })
    yield* sql`
      WITH b AS (
        INSERT INTO batch_calls (batch_call_id, org_id, api_key_id, name, from_number, trigger_timestamp,
          scheduled_timestamp, reserved_concurrency, call_time_window, total_task_count, next_dispatch_at,
          created_timestamp, retry_policy, max_concurrency)
        VALUES (${batch.batch_call_id}, ${orgId}, ${apiKeyId}, ${batch.name}, ${batch.from_number},
          ${head.trigger_timestamp ?? null}::bigint, ${batch.scheduled_timestamp},
          ${head.reserved_concurrency ?? 0}, ${window}::jsonb, ${batch.total_task_count},
          ${batch.scheduled_timestamp}, ${now}, ${retry}::jsonb, ${head.max_concurrency ?? null}::int4)
        RETURNING batch_call_id
      )
      SELECT pg_notify(${CREATED_CHANNEL}, batch_call_id) FROM b`
  })

  // One statement per chunk of tasks: the arrays travel in one Bind message, in binary. The set-returning
  // functions sit in the select list, where they advance in lockstep and stream (in FROM, unnest would first
  // materialize every row in a tuplestore, spilling to disk: measured 10-30% slower server-side); unnest pads
  // a shorter (empty) array with NULLs. The tasks go in before their batch row (no foreign key: decision 0302),
  // inside the create's transaction, so nothing of a refused or failed create is ever visible.
  const insertTasks = (orgId: OrgId, batchCallId: BatchCallId, offset: number, columns: TaskColumns) => {
    const versions = column(int8(columns.agentVersion))
    return sql`
      INSERT INTO batch_call_tasks (org_id, batch_call_id, task_index, to_number, override_agent_id,
        override_agent_version, override_agent_version_name, agent_override, dynamic_variables, metadata,
        custom_sip_headers, legal_group)
      SELECT ${orgId}, ${batchCallId}, t.task_index, t.to_number, t.agent_id, t.agent_version,
        t.agent_version_name, t.agent_override::jsonb, t.dynamic_variables::jsonb, t.metadata::jsonb,
        t.custom_sip_headers::jsonb, t.legal_group
      FROM (
        SELECT generate_series(${offset}::int4, ${offset + columns.toNumber.length - 1}::int4) AS task_index,
          unnest(${columns.toNumber}::text[]) AS to_number,
          unnest(${column(columns.agentId)}::text[]) AS agent_id,
          unnest(${versions}::int8[]) AS agent_version,
          unnest(${column(columns.agentVersionName)}::text[]) AS agent_version_name,
          unnest(${column(columns.agentOverride)}::text[]) AS agent_override,
          unnest(${column(columns.dynamicVariables)}::text[]) AS dynamic_variables,
          unnest(${column(columns.metadata)}::text[]) AS metadata,
          unnest(${column(columns.customSipHeaders)}::text[]) AS custom_sip_headers,
          unnest(${column(columns.legalGroup)}::int4[]) AS legal_group
      ) AS t`
  }

  // The location custom fields of the org's contacts among these numbers (NANP ones only: other numbers have no
  // legal hours), through contacts_org_phone_key; contacts without either field are not returned.
  const contactLocations = (orgId: OrgId, numbers: ReadonlyArray<string>) => {
    const nanp = numbers.filter((n) => n.charCodeAt(0) === 43 && n.charCodeAt(1) === 49)
    return nanp.length === 0
      ? Effect.succeed(new Map<string, ContactLocation>())
      : sql<{ phone_number: string; timezone: string | null; state: string | null }>`
        SELECT phone_number, custom_fields->>'timezone' AS timezone, custom_fields->>'state' AS state
        FROM contacts
        WHERE org_id = ${orgId} AND phone_number = ANY(${nanp}::text[])
          AND (custom_fields ? 'timezone' OR custom_fields ? 'state')`.pipe(
        Effect.map((rows) => {
          const found = new Map<string, ContactLocation>()
          for (const row of rows) {
            found.set(row.phone_number, {
              ...(row.timezone === null ? {} : { timezone: row.timezone }),
              ...(row.state === null ? {} : { state: row.state })
            })
          }
          return found
        })
      )
  }

  // The batch's distinct legal groups, once (a handful: one per zone set and rule set among its numbers); the
  // dispatcher reads them to decide which groups may be claimed now (decision 0623). Zones and rule ids travel
  // as one text per group ("&" and "," cannot occur in an IANA zone name or a jurisdiction code).
  const insertLegalGroups = (batchCallId: BatchCallId, groups: ReadonlyArray<LegalGroup>) =>
    groups.length === 0 ? Effect.void : Effect.asVoid(sql`
      INSERT INTO batch_call_legal_groups (batch_call_id, legal_group, zones, rule_ids)
      SELECT ${batchCallId}, g.legal_group, string_to_array(g.zones, '&'), string_to_array(g.rule_ids, ',')
      FROM unnest(${groups.map((g) => g.group)}::int4[], ${groups.map((g) => g.zones.join("&"))}::text[],
        ${groups.map((g) => g.ruleIds.join(","))}::text[]) AS g(legal_group, zones, rule_ids)`)

  const createFrom = <E>(
    orgId: OrgId,
    apiKeyId: string,
    source: CreateBatchCallSource<E>,
    options: CreateOptions
  ): Effect.Effect<BatchCall, CreateBatchCallError | E> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const batchCallId = newBatchCallId()
      const tasks = new TaskPreparer(options.maxTasks, options.legalGrouper())
      return yield* sql.withTransaction(Effect.gen(function*() {
        // a refused request is still read to its end: a later part of it may be invalid, which the caller
        // reports first (the source fails), as it did when the whole body was decoded before anything else
        yield* Stream.runForEach(Stream.mapError(source.tasks, (error) => new SourceFailed({ error })), (chunk) => {
          const prepared = tasks.add(chunk)
          return prepared === undefined ? Effect.void : Effect.gen(function*() {
            tasks.assignLegal(prepared.columns, yield* contactLocations(orgId, prepared.columns.toNumber))
            yield* insertTasks(orgId, batchCallId, prepared.offset, prepared.columns)
          })
        })
        const head = yield* Effect.mapError(source.head, (error) => new SourceFailed({ error }))
        // refusals in the order the whole request was checked before it was streamed
        if (tasks.count === 0) return yield* new NoTasks({ message: "tasks must contain at least one task" })
        if (tasks.count > options.maxTasks) {
          return yield* new TooManyTasks({
            count: tasks.count,
            max: options.maxTasks,
            message: `tasks has ${tasks.count} tasks; a batch holds at most ${options.maxTasks}`
          })
        }
        const headField = findUnstorableHead(head)
        if (headField !== undefined) return yield* unstorable(headField)
        if (tasks.refusal instanceof UnstorableText) return yield* tasks.refusal
        const batch = new BatchCall({
          batch_call_id: batchCallId,
          name: head.name ?? "",
          from_number: head.from_number,
          scheduled_timestamp: head.trigger_timestamp ?? now,
          total_task_count: tasks.count,
          ...(head.call_time_window === undefined ? {} : { call_time_window: canonicalize(head.call_time_window) })
        })
        const hash = tasks.digest(head)
        const earlier = yield* claim(orgId, apiKeyId, batchCallId, hash, now, options)
        if (earlier !== undefined) {
          const stored = yield* selectBatch(orgId, earlier)
          // the record's foreign key cascades from the batch, so its batch exists
          if (stored !== undefined) {
            const keyless = options.idempotencyKey === undefined || options.idempotencyKey === ""
            return yield* new EarlierBatch({ batch: stored.batch, keylessHash: keyless ? hash : undefined, now })
          }
        }
        yield* checkFromNumber(orgId, head.from_number)
        yield* checkAgents(orgId, tasks.agents)
        yield* insertLegalGroups(batchCallId, tasks.legal.groups)
        yield* insertBatch(orgId, apiKeyId, head, batch, now)
        return batch
      }))
    }).pipe(
      // database and row-decoding failures are not the caller's to handle (house style §5.3)
      Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die }),
      Effect.catchTags({
        "BatchCallsRepo/EarlierBatch": (earlier: EarlierBatch) =>
          earlier.keylessHash === undefined
            ? Effect.succeed(earlier.batch)
            : Effect.as(touchRecent(orgId, apiKeyId, earlier.keylessHash, earlier.now), earlier.batch),
        "BatchCallsRepo/SourceFailed": (failed: SourceFailed) => Effect.fail(failed.error as E)
      }),
      Effect.withSpan("BatchCallsRepo.createFrom")
    )

  const create = (orgId: OrgId, apiKeyId: string, request: CreateBatchCallRequest, options: CreateOptions) => {
    const { tasks, ...head } = request
    return createFrom(orgId, apiKeyId, {
      tasks: Stream.fromIterable(chunksOf(tasks, CHUNK_TASKS)),
      head: Effect.succeed(head)
    }, options)
  }

  return { create, createFrom }
}
