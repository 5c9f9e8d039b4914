/**
 * The carrier pacer a deployment runs with (decision 0610): Redis when `REDIS_URL` is set, else PostgreSQL, at
 * `SVC_CARRIER_CPS` per account.
 */
import { NodeRedis } from "@effect/platform-node"
import { Config, Effect, Layer, Option } from "effect"
import type { Redis } from "effect/persistence"
import type { SqlClient } from "effect/sql"
import type { CarrierPacer } from "./CarrierPacer.ts"
import * as CarrierPacerPostgres from "./CarrierPacerPostgres.ts"
import * as CarrierPacerRedis from "./CarrierPacerRedis.ts"
import * as CarrierPacingConfig from "./CarrierPacingConfig.ts"

/**
 * The pacer from `settings` and `REDIS_URL`.
 *
 * @category layers
 */
export const layerWith = (
  settings: CarrierPacingConfig.CarrierPacingSettings
): Layer.Layer<CarrierPacer, Config.ConfigError | Redis.RedisError, SqlClient.SqlClient> =>
  Layer.unwrap(
    Effect.map(Config.option(Config.String("REDIS_URL")), (url) =>
      Option.isNone(url)
        ? CarrierPacerPostgres.layer(settings)
        : CarrierPacerRedis.layer(settings).pipe(
          // Commands fail at once while the connection is down instead of queueing until it returns: a queued
          // command would hold a dial, and shutdown waits for queued commands (as RateLimitWindows in the server).
          Layer.provide(NodeRedis.layer({ url: url.value, disableOfflineQueue: true }))
        ))
  )

/**
 * The pacer from the environment: `SVC_CARRIER_CPS` (and the backoff settings) and `REDIS_URL`.
 *
 * @category layers
 */
export const layerFromEnv: Layer.Layer<
  CarrierPacer,
  Config.ConfigError | CarrierPacingConfig.InvalidCarrierPacingConfig | Redis.RedisError,
  SqlClient.SqlClient
> = Layer.unwrap(Effect.map(CarrierPacingConfig.load, layerWith))
