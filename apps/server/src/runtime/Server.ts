/**
 * The HTTP server: routes served by Node's http server on `PORT`, with graceful shutdown (in-flight
 * requests finish, up to 10 s, before the database closes). A port that is taken fails start-up
 * with one sentence. Requests that arrive between listening and serving wait for the routes (EarlyRequestQueue); requests
 * Node's parser refuses are answered in the error shape (ClientErrors).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { type Config, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import type { SqlClient } from "effect/sql"
import * as ClientErrors from "../middleware/ClientErrors.ts"
import { createServer } from "./EarlyRequestQueue.ts"
import * as Http from "./Http.ts"
import { ServerConfig } from "./ServerConfig.ts"

/**
 * The Node server behind the layer: requests held until the routes are attached (EarlyRequestQueue), and requests Node's
 * parser refuses answered in the error shape with a request id, logged under it (ClientErrors, decision 0106).
 *
 * @category constructors
 */
export const makeNodeServer = (
  run: (effect: Effect.Effect<void>) => unknown = Effect.runFork
) =>
  ClientErrors.attach(createServer(), (refused) =>
    run(
      Effect.logInfo(`refused by the HTTP parser: ${refused.status} ${refused.message}`).pipe(
        Effect.annotateLogs({ requestId: refused.requestId, code: refused.code ?? "" })
      )
    ))

/**
 * Where the start-up line says the server listens: `HOST` itself, or, for all interfaces (`0.0.0.0`, `::`, the
 * default), the URL that reaches it from this machine and the fact (it used to say `localhost` whatever `HOST`).
 */
export const listeningOn = (host: string, port: number): string =>
  host === "0.0.0.0" || host === "::" || host === ""
    ? `http://localhost:${port} (all interfaces, HOST ${host === "" ? "unset" : host})`
    : `http://${host.includes(":") ? `[${host}]` : host}:${port}`

/** @category layers */
export const layer: Layer.Layer<never, Error | Config.ConfigError, SqlClient.SqlClient> = Layer.unwrap(
  Effect.gen(function*() {
    const { host, port } = yield* ServerConfig
    const context = yield* Effect.context<never>()
    const listen = Layer.effectContext(
      Layer.build(
        NodeHttpServer.layer(() => makeNodeServer(Effect.runForkWith(context)), {
          port,
          host,
          gracefulShutdownTimeout: "10 seconds"
        })
      )
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
      Layer.tap(() => Effect.logInfo(`svc-server listening on ${listeningOn(host, port)}`))
    )
  })
)
