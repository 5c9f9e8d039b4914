/**
 * The pagination-key codec of this deployment. Its HMAC secret is `SVC_CURSOR_SECRET` when set
 * (at least 32 bytes; `SVC_CURSOR_PREVIOUS_SECRETS`, comma-separated, still verify during a
 * rotation), otherwise 32 random bytes generated once and kept in the database, so every replica
 * mints and verifies the same keys with no configuration.
 */
import * as Pagination from "@svc/domain/Pagination.ts"
import { Clock, Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as crypto from "node:crypto"

export class CursorKeys extends Context.Service<CursorKeys, Pagination.CursorCodec>()("@svc/store/CursorKeys") {
  static readonly layer = Layer.effect(
    CursorKeys,
    Effect.gen(function*() {
      const configured = yield* Config.option(Config.Redacted("SVC_CURSOR_SECRET"))
      const previous = yield* Config.withDefault(Config.String("SVC_CURSOR_PREVIOUS_SECRETS"), "")
      const previousSecrets = previous.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
      if (Option.isSome(configured)) {
        return Pagination.makeCursorCodec({ secret: configured.value, previousSecrets })
      }
      const sql = yield* SqlClient.SqlClient
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO svc_secrets (name, value, created_timestamp)
                 VALUES ('cursor', ${crypto.randomBytes(32)}, ${now}) ON CONFLICT (name) DO NOTHING`
      const rows = yield* sql<{ value: Uint8Array }>`SELECT value FROM svc_secrets WHERE name = 'cursor'`
      const secret = rows[0]?.value
      if (secret === undefined) return yield* Effect.die(new Error("svc_secrets has no cursor secret"))
      return Pagination.makeCursorCodec({ secret: Redacted.make(new Uint8Array(secret)), previousSecrets })
    }).pipe(Effect.orDie)
  )
}
