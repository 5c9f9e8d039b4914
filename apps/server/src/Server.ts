/**
 * The HTTP server: routes served by Node's http server on `PORT`, with graceful shutdown (in-flight
 * requests finish, up to 10 s, before the database closes). A port that is taken fails start-up
 * with one sentence. Requests that arrive between listening and serving wait for the routes (HeldServer).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { type Config, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import type { SqlClient } from "effect/sql"
import { createServer } from "./HeldServer.ts"
import * as Http from "./Http.ts"
import { ServerConfig } from "./ServerConfig.ts"

/** @category layers */
export const layer: Layer.Layer<never, Error | Config.ConfigError, SqlClient.SqlClient> = Layer.unwrap(
  Effect.gen(function*() {
    const { host, port } = yield* ServerConfig
    const listen = Layer.effectContext(
      Layer.build(NodeHttpServer.layer(() => createServer(), { port, host, gracefulShutdownTimeout: "10 seconds" }))
        .pipe(
          Effect.mapError((error) => {
            const text = String(error.cause ?? error)
            return new Error(
              /EADDRINUSE/.test(text)
                ? `PORT ${port} is already in use (set PORT to a free port)`
                : /EACCES/.test(text)
                ? `PORT ${port} needs privileges this process does not have (use a port above 1023)`
                : `cannot listen on ${host}:${port}: ${text.split("\n")[0]}`
            )
          })
        )
    )
    return HttpRouter.serve(Http.routes, {
      disableListenLog: true,
      disableLogger: true,
      routerConfig: Http.routerConfig
    }).pipe(
      Layer.provide(listen),
      Layer.tap(() => Effect.logInfo(`svc-server listening on http://localhost:${port}`))
    )
  })
)
