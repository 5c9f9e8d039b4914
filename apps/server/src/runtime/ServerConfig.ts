/** Listening address of the HTTP API (`PORT`, default 8080; `HOST`, default all interfaces). */
import { Config } from "effect"

/** @category models */
export const ServerConfig = Config.all({
  port: Config.withDefault(Config.Port("PORT"), 8080),
  host: Config.withDefault(Config.String("HOST"), "0.0.0.0")
})
