/**
 * Organisations' calling policies (decision 0628: "Per-org override of the policy (stricter always allowed;
 * looser only with an explicit, audited admin flag)"; migration 0025).
 *
 * An org's effective policy is the default policy (CallingPolicy.defaultPolicy, the reference's rows) with the org's
 * override applied (`applyOverride`). Setting an override:
 * - validates it against the default policy: a row looser than the one it replaces is refused (`LooserThanPolicy`,
 *   naming every loosening) unless the admin approved it (`allowLooser: {approvedBy, reason}`, given as flags of
 *   the admin command, never inside the file);
 * - replaces the org's previous override whole (an override is the complete list of the org's rows), bumps its
 *   version and appends an audit row, in one transaction;
 * - wakes the org's open batches whose trigger time has passed, so that a batch sleeping until a legal opening
 *   computed under the previous policy is looked at again at once (a looser policy may open it earlier; a stricter
 *   one is applied at the scheduler's next look anyway, since every claim re-reads the version).
 */
import {
  applyOverride,
  type CallingPolicy,
  defaultPolicy,
  loosenings,
  type LooserThanPolicy,
  PolicyOverride
} from "@svc/domain/compliance/CallingPolicy.ts"
import { Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CREATED_CHANNEL } from "../batches/index.ts"
import { OrgNotFound } from "../orgs/index.ts"

/**
 * An org's effective policy and the version of its override (0: none, the default policy).
 *
 * @category models
 */
export interface EffectivePolicy {
  readonly policy: CallingPolicy
  readonly version: number
  readonly override: PolicyOverride | undefined
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
 * The default policy, version 0: what an org without an override dials under.
 *
 * @category constructors
 */
export const defaultEffective: EffectivePolicy = { policy: defaultPolicy, version: 0, override: undefined }

const decodeOverride = Schema.decodeUnknownSync(PolicyOverride)

/**
 * The effective policy of a stored override. A stored override was valid when it was set (its looser rows approved);
 * the default policy may have become stricter since (a corrected row), so each row is applied again: an approved
 * override's rows as they are, an unapproved one's only where they are still stricter or equal (elsewhere the
 * default row stays, never a looser row nobody approved). An override that no longer decodes: the default policy.
 *
 * @category combinators
 */
export const effectiveOf = (override: unknown, version: number): EffectivePolicy => {
  let decoded: PolicyOverride
  try {
    decoded = decodeOverride(override)
  } catch {
    return { ...defaultEffective, version }
  }
  const rules = decoded.allowLooser !== undefined
    ? decoded.rules
    : decoded.rules.filter((row) => loosenings(row, baseOf(row.jurisdiction)).length === 0)
  const applied = applyOverride(defaultPolicy, { ...decoded, rules })
  return Result.isSuccess(applied)
    ? { policy: applied.success, version, override: decoded }
    : { ...defaultEffective, version }
}

/**
 * The effective policies of `orgIds` that have an override, read on `sql` in one statement (an org missing from the
 * map has the default policy); traced as `span` when there is something to read.
 *
 * @category combinators
 */
export const effectivePolicies = (
  sql: SqlClient.SqlClient,
  orgIds: ReadonlyArray<string>,
  span: string
): Effect.Effect<Map<string, EffectivePolicy>> =>
  orgIds.length === 0
    ? Effect.succeed(new Map<string, EffectivePolicy>())
    : sql<{ org_id: string; override: unknown; version: number }>`
      SELECT org_id, override, version::float8 AS version FROM org_calling_policies
      WHERE org_id = ANY(${orgIds}::text[])`.pipe(
      Effect.map((rows) => new Map(rows.map((r) => [r.org_id, effectiveOf(r.override, r.version)]))),
      Effect.orDie,
      Effect.withSpan(span)
    )

const baseOf = (jurisdiction: string) =>
  jurisdiction === "US"
    ? defaultPolicy.federal
    : defaultPolicy.states.find((r) => r.jurisdiction === jurisdiction) ?? defaultPolicy.federal

/**
 * The looser rows of an override against the default policy, one line each (empty: stricter or equal).
 *
 * @category combinators
 */
export const looseningsOf = (override: PolicyOverride): Array<string> => {
  const lines: Array<string> = []
  for (const row of override.rules) {
    for (const problem of loosenings(row, baseOf(row.jurisdiction))) {
      lines.push(`override ${row.jurisdiction} ${problem}`)
    }
  }
  return lines
}

/**
 * Reading and changing organisations' calling policies.
 *
 * @category services
 */
export class CallingPolicyRepo extends Context.Service<CallingPolicyRepo, {
  /** The org's effective policy (the default policy, version 0, when it has no override). */
  readonly effective: (orgId: string) => Effect.Effect<EffectivePolicy>
  /** The effective policies of several orgs at once (missing orgs: the default policy). */
  readonly effectiveMany: (orgIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, EffectivePolicy>>
  /** Sets the org's override (replacing the previous one whole); returns the new effective policy. */
  readonly set: (
    orgId: string,
    override: PolicyOverride,
    now: number
  ) => Effect.Effect<EffectivePolicy, OrgNotFound | LooserThanPolicy>
  /** Removes the org's override: the default policy applies again. */
  readonly clear: (orgId: string, now: number) => Effect.Effect<EffectivePolicy, OrgNotFound>
  /** The org's policy changes, newest first. */
  readonly audit: (orgId: string, limit: number) => Effect.Effect<ReadonlyArray<PolicyAuditEntry>>
}>()("@svc/store/CallingPolicyRepo") {
  /** @category layers */
  static readonly layer: Layer.Layer<CallingPolicyRepo, never, SqlClient.SqlClient> = Layer.effect(
    CallingPolicyRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const effectiveMany = (orgIds: ReadonlyArray<string>) =>
        effectivePolicies(sql, orgIds, "CallingPolicyRepo.effectiveMany")

      const effective = (orgId: string) =>
        effectiveMany([orgId]).pipe(Effect.map((found) => found.get(orgId) ?? defaultEffective))

      const orgExists = (orgId: string) =>
        sql<{ org_id: string }>`SELECT org_id FROM orgs WHERE org_id = ${orgId} FOR SHARE`.pipe(
          Effect.flatMap((rows) =>
            rows.length > 0 ? Effect.void : Effect.fail(new OrgNotFound({ orgId, message: `no org ${orgId}` }))
          )
        )

      /** The org's open batches whose trigger time has passed are due now (see the module comment). */
      const wakeBatches = (orgId: string, now: number) =>
        sql`
          WITH woken AS (
            UPDATE batch_calls SET next_dispatch_at = ${now}
            WHERE org_id = ${orgId} AND status IN ('scheduled', 'in_progress') AND next_dispatch_at > ${now}
              AND coalesce(trigger_timestamp, 0) <= ${now}
            RETURNING batch_call_id
          )
          SELECT pg_notify(${CREATED_CHANNEL}, batch_call_id) FROM woken`

      const set = (orgId: string, override: PolicyOverride, now: number) =>
        Effect.gen(function*() {
          const applied = applyOverride(defaultPolicy, override)
          if (Result.isFailure(applied)) return yield* Effect.fail(applied.failure)
          const stored = Schema.encodeSync(PolicyOverride)(override)
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
                ${looseningsOf(override)}::text[], ${override.allowLooser?.approvedBy ?? null},
                ${override.allowLooser?.reason ?? null})`
            yield* wakeBatches(orgId, now)
            return { policy: applied.success, version: row!.version, override } satisfies EffectivePolicy
          }))
        }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CallingPolicyRepo.set"))

      const clear = (orgId: string, now: number) =>
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
          return { ...defaultEffective, version: row!.version }
        })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CallingPolicyRepo.clear"))

      const audit = (orgId: string, limit: number) =>
        sql<PolicyAuditEntry>`
          SELECT version::float8 AS version, at::float8 AS at, action, override, loosenings, approved_by, reason
          FROM org_calling_policy_audit WHERE org_id = ${orgId}
          ORDER BY audit_id DESC LIMIT ${limit}`.pipe(Effect.orDie, Effect.withSpan("CallingPolicyRepo.audit"))

      return CallingPolicyRepo.of({ effective, effectiveMany, set, clear, audit })
    })
  )
}
