/**
 * Organisations and their API keys. A key is 32 random bytes shown once (`svc_` + base64url); only
 * its SHA-256 is stored, and a request's key is found by that hash through the primary key (O(1)).
 */
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as crypto from "node:crypto"

/** @category errors */
export class OrgNotFound extends Schema.TaggedError<OrgNotFound>()("OrgNotFound", {
  orgId: Schema.String,
  message: Schema.String
}) {}

/** @category models */
export interface KeyOwner {
  readonly orgId: OrgId
  /** Non-secret identity of the key (first 16 hex digits of its hash). */
  readonly apiKeyId: string
}

/** The stored digest of a presented key. @category encoding */
export const hashKey = (key: string): Buffer => crypto.createHash("sha256").update(key, "utf8").digest()

/** Random, unguessable ids with a readable prefix: `org_…`, `batch_…`. @category constructors */
export const randomId = (prefix: string, bytes = 12) => `${prefix}_${crypto.randomBytes(bytes).toString("hex")}`

export class ApiKeys extends Context.Service<ApiKeys, {
  readonly createOrg: (name: string, concurrencyLimit?: number) => Effect.Effect<OrgId>
  /** Succeeds when the org exists. */
  readonly requireOrg: (orgId: OrgId) => Effect.Effect<void, OrgNotFound>
  /** A new key for the org; the plaintext is returned once and never stored. */
  readonly createKey: (orgId: OrgId) => Effect.Effect<string, OrgNotFound>
  readonly lookup: (key: string) => Effect.Effect<Option.Option<KeyOwner>>
  readonly addPhoneNumber: (orgId: OrgId, phoneNumber: string) => Effect.Effect<void, OrgNotFound>
  readonly addAgent: (orgId: OrgId, agentId: string, version: number) => Effect.Effect<void, OrgNotFound>
}>()("@svc/store/ApiKeys") {
  static readonly layer = Layer.effect(
    ApiKeys,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const exists = (orgId: OrgId) =>
        Effect.flatMap(sql`SELECT 1 FROM orgs WHERE org_id = ${orgId}`, (rows) =>
          rows.length > 0
            ? Effect.void
            : Effect.fail(new OrgNotFound({ orgId, message: `no org ${orgId}` })))
      return ApiKeys.of({
        requireOrg: (orgId) => exists(orgId).pipe(Effect.catchTag("SqlError", Effect.die)),
        createOrg: Effect.fn("ApiKeys.createOrg")(function*(name, concurrencyLimit = 20) {
          // The org id is minted here, so this is where it gets its brand.
          const orgId = OrgId.make(randomId("org"))
          const now = yield* Clock.currentTimeMillis
          yield* sql`INSERT INTO orgs (org_id, name, concurrency_limit, created_timestamp)
                     VALUES (${orgId}, ${name}, ${concurrencyLimit}, ${now})`
          return orgId
        }, Effect.orDie),
        createKey: (orgId) =>
          Effect.gen(function*() {
            yield* exists(orgId)
            const key = `svc_${crypto.randomBytes(32).toString("base64url")}`
            const hash = hashKey(key)
            const now = yield* Clock.currentTimeMillis
            yield* sql`INSERT INTO api_keys (key_hash, org_id, key_prefix, created_timestamp)
                       VALUES (${hash}, ${orgId}, ${key.slice(0, 8)}, ${now})`.pipe(Effect.orDie)
            return key
          }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("ApiKeys.createKey")),
        lookup: (key) =>
          // The key's row is where a request's org enters: branded here, once, for every handler.
          sql<{ org_id: OrgId; key_hash: Uint8Array }>`
            SELECT org_id, key_hash FROM api_keys WHERE key_hash = ${hashKey(key)} AND revoked_timestamp IS NULL`.pipe(
            Effect.map((rows) =>
              Option.map(Option.fromNullishOr(rows[0]), (row) => ({
                orgId: row.org_id,
                apiKeyId: Buffer.from(row.key_hash).toString("hex").slice(0, 16)
              }))
            ),
            Effect.orDie
          ),
        addPhoneNumber: (orgId, phoneNumber) =>
          Effect.gen(function*() {
            yield* exists(orgId)
            const now = yield* Clock.currentTimeMillis
            yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp)
                       VALUES (${orgId}, ${phoneNumber}, ${now}) ON CONFLICT DO NOTHING`
          }).pipe(Effect.catchTag("SqlError", Effect.die)),
        addAgent: (orgId, agentId, version) =>
          Effect.gen(function*() {
            yield* exists(orgId)
            const now = yield* Clock.currentTimeMillis
            yield* sql`INSERT INTO agents (org_id, agent_id, version, created_timestamp)
                       VALUES (${orgId}, ${agentId}, ${version}, ${now}) ON CONFLICT DO NOTHING`
          }).pipe(Effect.catchTag("SqlError", Effect.die))
      })
    })
  )
}
