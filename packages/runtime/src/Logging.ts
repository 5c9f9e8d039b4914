/**
 * Structured logs: one JSON object per line on stdout, at the level `LOG_LEVEL` asks for
 * (`All`, `Trace`, `Debug`, `Info` (default), `Warn`, `Error`, `Fatal`, `None`).
 */
import { Config, Effect, Layer, Logger, References } from "effect"

/** @category models */
export const logLevel = Config.withDefault(Config.LogLevel("LOG_LEVEL"), "Info" as const)

/** @category layers */
export const layer = Layer.unwrap(
  Effect.map(logLevel, (level) =>
    Layer.mergeAll(
      Logger.layer([Logger.consoleJson]),
      Layer.succeed(References.MinimumLogLevel, level)
    ))
)
