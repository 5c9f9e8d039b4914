/**
 * Test-case definitions (decision 0700): one row per definition, the API's shape kept as JSON and decoded with the
 * domain's schema on read, listed per engine newest first with signed keyset keys (decision 0102).
 */
import {
  engineKey,
  type ListTestCaseDefinitionsQuery,
  type ListTestCaseDefinitionsResponse,
  type StoredDefinition,
  TestCaseDefinition
} from "@svc/domain/batchTests/TestCaseDefinition.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import * as Pagination from "@svc/domain/Pagination.ts"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as crypto from "node:crypto"
import { listing, type PagedList, resumeAfter } from "./Pages.ts"

/** @category errors */
export class TestCaseDefinitionNotFound
  extends Schema.TaggedError<TestCaseDefinitionNotFound>()("TestCaseDefinitionNotFound", {
    id: Schema.String,
    message: Schema.String
  })
{}

interface Row {
  readonly test_case_definition_id: string
  readonly definition: unknown
  readonly creation_timestamp: string | number
  readonly user_modified_timestamp: string | number
}

const decodeDefinition = Schema.decodeUnknownSync(TestCaseDefinition)

/** A stored row in the API's shape. @category encoding */
export const toDefinition = (row: Row): TestCaseDefinition =>
  decodeDefinition({
    ...(typeof row.definition === "string" ? JSON.parse(row.definition) : row.definition as object),
    test_case_definition_id: row.test_case_definition_id,
    creation_timestamp: Number(row.creation_timestamp),
    user_modified_timestamp: Number(row.user_modified_timestamp)
  })

const notFound = (id: string) =>
  new TestCaseDefinitionNotFound({ id, message: `test_case_definition_id ${id} not found` })

export class TestCaseDefinitionsRepo extends Context.Service<TestCaseDefinitionsRepo, {
  readonly create: (orgId: OrgId, definition: StoredDefinition) => Effect.Effect<TestCaseDefinition>
  readonly get: (orgId: OrgId, id: string) => Effect.Effect<TestCaseDefinition, TestCaseDefinitionNotFound>
  readonly update: (
    orgId: OrgId,
    id: string,
    definition: StoredDefinition
  ) => Effect.Effect<TestCaseDefinition, TestCaseDefinitionNotFound>
  readonly remove: (orgId: OrgId, id: string) => Effect.Effect<void, TestCaseDefinitionNotFound>
  readonly list: PagedList<ListTestCaseDefinitionsQuery, ListTestCaseDefinitionsResponse>
}>()("@svc/store/TestCaseDefinitionsRepo") {
  static readonly layer = Layer.effect(
    TestCaseDefinitionsRepo,
    Effect.gen(function*() {
      const { cursors, sql } = yield* listing
      return TestCaseDefinitionsRepo.of({
        create: Effect.fn("TestCaseDefinitionsRepo.create")(function*(orgId, definition) {
          const id = `tcd_${crypto.randomBytes(12).toString("hex")}`
          const now = yield* Clock.currentTimeMillis
          const key = engineKey(definition.response_engine)
          const rows = yield* sql<Row>`
            INSERT INTO test_case_definitions
              (org_id, test_case_definition_id, engine_type, engine_id, definition, creation_timestamp,
               user_modified_timestamp)
            VALUES (${orgId}, ${id}, ${key.type}, ${key.id}, ${JSON.stringify(definition)}::jsonb, ${now}, ${now})
            RETURNING *`.pipe(Effect.orDie)
          return toDefinition(rows[0]!)
        }),
        get: (orgId, id) =>
          sql<Row>`
            SELECT * FROM test_case_definitions WHERE org_id = ${orgId} AND test_case_definition_id = ${id}`.pipe(
            Effect.orDie,
            Effect.flatMap((rows) =>
              rows[0] === undefined ? Effect.fail(notFound(id)) : Effect.succeed(toDefinition(rows[0]))
            ),
            Effect.withSpan("TestCaseDefinitionsRepo.get")
          ),
        update: Effect.fn("TestCaseDefinitionsRepo.update")(function*(orgId, id, definition) {
          const now = yield* Clock.currentTimeMillis
          const key = engineKey(definition.response_engine)
          const rows = yield* sql<Row>`
            UPDATE test_case_definitions
            SET definition = ${JSON.stringify(definition)}::jsonb, engine_type = ${key.type}, engine_id = ${key.id},
                -- a timestamp never goes back, whatever the clocks of two replicas say
                user_modified_timestamp = greatest(user_modified_timestamp, ${now})
            WHERE org_id = ${orgId} AND test_case_definition_id = ${id}
            RETURNING *`.pipe(Effect.orDie)
          return rows[0] === undefined ? yield* notFound(id) : toDefinition(rows[0])
        }),
        remove: Effect.fn("TestCaseDefinitionsRepo.remove")(function*(orgId, id) {
          // runs keep their snapshot of the definition: deleting it does not change what a run tested
          const rows = yield* sql`
            DELETE FROM test_case_definitions WHERE org_id = ${orgId} AND test_case_definition_id = ${id}
            RETURNING 1 AS one`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* notFound(id)
        }),
        list: Effect.fn("TestCaseDefinitionsRepo.list")(function*(orgId, query) {
          const limit = query.limit === undefined ? 50 : Number(query.limit)
          const engineId = query.type === "svc-llm"
            ? query.llm_id
            : query.type === "conversation-flow"
            ? query.conversation_flow_id
            : query.llm_websocket_url
          const context = {
            orgId,
            queryFingerprint: Pagination.queryFingerprint({
              resource: "test-case-definitions",
              type: query.type,
              engineId: engineId ?? null
            })
          }
          const after = yield* resumeAfter(cursors, query.pagination_key, context)
          const seek = after === undefined
            ? sql`TRUE`
            : sql`(creation_timestamp, test_case_definition_id) < (${after.sortValue}, ${after.id})`
          const engine = engineId === undefined ? sql`TRUE` : sql`engine_id = ${engineId}`
          const rows = yield* sql<Row>`
            SELECT * FROM test_case_definitions
            WHERE org_id = ${orgId} AND engine_type = ${query.type} AND ${engine} AND ${seek}
            ORDER BY creation_timestamp DESC, test_case_definition_id DESC
            LIMIT ${limit + 1}`.pipe(Effect.orDie)
          const items = rows.slice(0, limit).map(toDefinition)
          const last = items[items.length - 1]
          return rows.length > limit && last !== undefined
            ? {
              has_more: true,
              items,
              pagination_key: cursors.encode(
                { sortValue: last.creation_timestamp, id: last.test_case_definition_id },
                context
              )
            }
            : { has_more: false, items }
        })
      })
    })
  )
}
