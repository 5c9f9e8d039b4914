/**
 * An org that owns the test's from-number, and batches of it created through BatchCallsRepo (the create-batch-call
 * path), for the store's batch tests.
 */
import { LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BatchCallsRepo } from "../src/batches/BatchCallsRepo.ts"

/** The number every fixture org owns. */
export const FROM = "+14155550100"

/** An org with concurrency limit `limit` that owns FROM. */
export const addOrg = (orgId: OrgId, limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp) VALUES (${orgId}, ${orgId}, ${limit}, 0)`
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${orgId}, ${FROM}, 0)`
  })

/** A batch of `tasks` tasks from FROM (task i dials +1212555{1000 + i}), with `extra` request fields; its id. */
export const createBatch = (orgId: OrgId, tasks: number, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const repo = yield* BatchCallsRepo
    const batch = yield* repo.create(
      orgId,
      "key",
      Schema.decodeUnknownSync(CreateBatchCallRequest)({
        from_number: FROM,
        tasks: Array.from({ length: tasks }, (_, i) => ({ to_number: `+1212555${String(1000 + i)}` })),
        ...extra
      }),
      // the legal grouping is the caller's (dependency rule 3), as the server's create-batch-call handler gives it
      { maxTasks: 100_000, legalGrouper: () => new LegalGrouper() }
    ).pipe(Effect.orDie)
    return batch.batch_call_id
  })
