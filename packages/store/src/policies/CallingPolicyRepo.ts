/**
 * Organisations' calling policies (decision 0628: "Per-org override of the policy (stricter always allowed;
 * looser only with an explicit, audited admin flag)"; migration 0025).
 *
 * What an override makes of the policy, and whether an org may set it, are the domain's decisions
 * (`@svc/domain/compliance/EffectivePolicy.ts`), run by the callers (dependency rule 3): this repository stores an
 * override as it was decided and returns it as stored. Setting one:
 * - replaces the org's previous override whole (an override is the complete list of the org's rows), bumps its
 *   version and appends an audit row (its loosenings and who approved them), in one transaction;
 * - wakes the org's open batches whose trigger time has passed, so that a batch sleeping until a legal opening
 *   computed under the previous policy is looked at again at once (a looser policy may open it earlier; a stricter
 *   one is applied at the scheduler's next look anyway, since every claim re-reads the version).
 */
import type { PolicyOverride } from "@svc/domain/compliance/CallingPolicy.ts"
import type { DecidedOverride } from "@svc/domain/compliance/EffectivePolicy.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CREATED_CHANNEL } from "../batches/index.ts"
import { OrgNotFound } from "../orgs/index.ts"

/**
 * An org's override as stored (undecoded: the caller decides what it makes of it, `effectiveOf`) and its version.
 *
 * @category models
 */
export interface StoredPolicy {
  readonly override: unknown
  readonly version: number
}

/**
 * One change of an org's policy, as the audit log keeps it.
 *
 * @category models
 */
export interface PolicyAuditEntry {
  readonly version: number
  readonly at: number
  readonly action: "set" | "clear"
  readonly override: PolicyOverride | null
  readonly loosenings: ReadonlyArray<string>
  readonly approved_by: string | null
  readonly reason: string | null
}

/**
 * The stored overrides of `orgIds` that have one, read on `sql` in one statement (an org missing from the map has
 * none: the default policy); traced as `span` when there is something to read.
 *
 * @category combinators
 */
export const storedPolicies = (
  sql: SqlClient.SqlClient,
  orgIds: ReadonlyArray<string>,
  span: string
): Effect.Effect<Map<string, StoredPolicy>> =>
  orgIds.length === 0
    ? Effect.succeed(new Map<string, StoredPolicy>())
    : sql<{ org_id: string; override: unknown; version: number }>`
      SELECT org_id, override, version::float8 AS version FROM org_calling_policies
      WHERE org_id = ANY(${orgIds}::text[])`.pipe(
      Effect.map((rows) => new Map(rows.map((r) => [r.org_id, { override: r.override, version: r.version }]))),
      Effect.orDie,
      Effect.withSpan(span)
    )

/**
 * Reading and changing organisations' calling policies.
 *
 * @category services
 */
export class CallingPolicyRepo extends Context.Service<CallingPolicyRepo, {
  /** The org's stored override (undefined: it never had one, the default policy at version 0). */
  readonly stored: (orgId: OrgId) => Effect.Effect<StoredPolicy | undefined>
  /** The stored overrides of several orgs at once (missing orgs: none). */
  readonly storedMany: (orgIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, StoredPolicy>>
  /** Stores the org's decided override (replacing the previous one whole); returns its version. */
  readonly set: (
    orgId: OrgId,
    decided: DecidedOverride,
    now: number
  ) => Effect.Effect<{ readonly version: number }, OrgNotFound>
  /** Removes the org's override (the default policy applies again); returns the new version. */
  readonly clear: (orgId: OrgId, now: number) => Effect.Effect<{ readonly version: number }, OrgNotFound>
  /** The org's policy changes, newest first. */
  readonly audit: (orgId: OrgId, limit: number) => Effect.Effect<ReadonlyArray<PolicyAuditEntry>>
}>()("@svc/store/CallingPolicyRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<CallingPolicyRepo, never, SqlClient.SqlClient> = Layer.effect(
    CallingPolicyRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const storedMany = (orgIds: ReadonlyArray<string>) => storedPolicies(sql, orgIds, "CallingPolicyRepo.storedMany")

      const stored = (orgId: OrgId) => storedMany([orgId]).pipe(Effect.map((found) => found.get(orgId)))

      const orgExists = (orgId: OrgId) =>
        sql<{ org_id: string }>`SELECT org_id FROM orgs WHERE org_id = ${orgId} FOR SHARE`.pipe(
          Effect.flatMap((rows) =>
            rows.length > 0 ? Effect.void : Effect.fail(new OrgNotFound({ orgId, message: `no org ${orgId}` }))
          )
        )

      /** The org's open batches whose trigger time has passed are due now (see the module comment). */
      const wakeBatches = (orgId: OrgId, now: number) =>
        sql`
          WITH woken AS (
            UPDATE batch_calls SET next_dispatch_at = ${now}
            WHERE org_id = ${orgId} AND status IN ('scheduled', 'in_progress') AND next_dispatch_at > ${now}
              AND coalesce(trigger_timestamp, 0) <= ${now}
            RETURNING batch_call_id
          )
          SELECT pg_notify(${CREATED_CHANNEL}, batch_call_id) FROM woken`

      const set = (orgId: OrgId, decided: DecidedOverride, now: number) =>
        Effect.gen(function*() {
          const { override } = decided
          const stored = decided.stored
          return yield* sql.withTransaction(Effect.gen(function*() {
            yield* orgExists(orgId)
            const [row] = yield* sql<{ version: number }>`
              INSERT INTO org_calling_policies (org_id, override, version, updated_timestamp)
              VALUES (${orgId}, ${JSON.stringify(stored)}::jsonb, 1, ${now})
              ON CONFLICT (org_id) DO UPDATE
                SET override = EXCLUDED.override, version = org_calling_policies.version + 1,
                  updated_timestamp = EXCLUDED.updated_timestamp
              RETURNING version::float8 AS version`
            yield* sql`
              INSERT INTO org_calling_policy_audit (org_id, version, at, action, override, loosenings, approved_by,
                reason)
              VALUES (${orgId}, ${row!.version}, ${now}, 'set', ${JSON.stringify(stored)}::jsonb,
                ${decided.loosenings}::text[], ${override.allowLooser?.approvedBy ?? null},
                ${override.allowLooser?.reason ?? null})`
            yield* wakeBatches(orgId, now)
            return { version: row!.version }
          }))
        }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CallingPolicyRepo.set"))

      const clear = (orgId: OrgId, now: number) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* orgExists(orgId)
          // the version keeps rising after a clear, so a scheduler that cached the override sees the change
          const [row] = yield* sql<{ version: number }>`
            INSERT INTO org_calling_policies (org_id, override, version, updated_timestamp)
            VALUES (${orgId}, '{"rules":[]}'::jsonb, 1, ${now})
            ON CONFLICT (org_id) DO UPDATE
              SET override = EXCLUDED.override, version = org_calling_policies.version + 1,
                updated_timestamp = EXCLUDED.updated_timestamp
            RETURNING version::float8 AS version`
          yield* sql`
            INSERT INTO org_calling_policy_audit (org_id, version, at, action)
            VALUES (${orgId}, ${row!.version}, ${now}, 'clear')`
          yield* wakeBatches(orgId, now)
          return { version: row!.version }
        })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CallingPolicyRepo.clear"))

      const audit = (orgId: OrgId, limit: number) =>
        sql<PolicyAuditEntry>`
          SELECT version::float8 AS version, at::float8 AS at, action, override, loosenings, approved_by, reason
          FROM org_calling_policy_audit WHERE org_id = ${orgId}
          ORDER BY audit_id DESC LIMIT ${limit}`.pipe(Effect.orDie, Effect.withSpan("CallingPolicyRepo.audit"))

      return CallingPolicyRepo.of({ stored, storedMany, set, clear, audit })
    })
  )
}
