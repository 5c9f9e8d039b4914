/**
 * The whole HTTP surface of svc-server on a real, isolated database (a cloned template per server),
 * served through `HttpRouter.toWebHandler`: real routing, decoding, middleware and SQL, no socket.
 * `request(...)` sends raw HTTP the way any client (the vendor's included) would. `listen(...)` serves
 * the same routes on a real Node socket, for what only a socket shows (bodies that arrive slowly, or
 * never end).
 */
import { NodeHttpServer } from "@effect/platform-node"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Clock, ConfigProvider, Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import type { SqlClient } from "effect/sql"
import * as http from "node:http"
import * as Http from "../../src/runtime/Http.ts"

export interface Response {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
}

export interface RequestOptions {
  /** JSON body (serialised) */
  readonly body?: unknown
  /** Raw body text, sent as is with Content-Type application/json */
  readonly raw?: string
  /** Raw body bytes (e.g. not UTF-8), sent as is with Content-Type application/json */
  readonly bytes?: Uint8Array
  /** API key; `null` sends no Authorization header; default: the server's first key */
  readonly key?: string | null
  readonly headers?: Record<string, string>
  /** The clock the request runs on (a `TestClock` pins the time); default: the live clock */
  readonly clock?: Clock.Clock
}

export interface TestServer {
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<Response>
  /** A new org with one API key. */
  readonly org: (name?: string) => Promise<{ readonly orgId: OrgId; readonly key: string }>
  readonly run: <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient | ApiKeys>) => Promise<A>
  /** `fetch` into the server, for HTTP clients (the typed HttpApiClient) that take a fetch. */
  readonly fetch: typeof globalThis.fetch
  readonly close: () => Promise<void>
  /** The database services, for a second server over the same data (a replica). */
  readonly database: Context.Context<SqlClient.SqlClient | ApiKeys>
}

/** Starts a server over a fresh database; `env` overrides configuration (e.g. SVC_RATE_LIMIT). */
export const start = async (env: Record<string, string> = {}, replicaOf?: TestServer): Promise<TestServer> => {
  const config = ConfigProvider.layer(
    ConfigProvider.fromEnv({ env: { ...(process.env as Record<string, string>), ...env } })
  )
  const scope = Scope.makeUnsafe()
  const context = replicaOf?.database ?? await Effect.runPromise(
    Layer.buildWithScope(ApiKeys.layer.pipe(Layer.provideMerge(TestDatabase.layer), Layer.provide(config)), scope)
  )
  const database = Layer.succeedContext(context)
  const { dispose, handler } = HttpRouter.toWebHandler(
    Http.routes.pipe(Layer.provide(database), Layer.provide(HttpServer.layerServices), Layer.provide(config)),
    { disableLogger: true, routerConfig: Http.routerConfig }
  )
  const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient | ApiKeys>) =>
    Effect.runPromise(Effect.provideContext(effect, context))
  let defaultKey: string | undefined
  const org = async (name = "test org") => {
    const orgId = await run(Effect.flatMap(ApiKeys, (keys) => keys.createOrg(name)))
    const key = await run(Effect.flatMap(ApiKeys, (keys) => keys.createKey(orgId)))
    defaultKey ??= key
    return { orgId, key }
  }
  const request = async (method: string, path: string, options: RequestOptions = {}) => {
    const headers = new Headers(options.headers)
    const key = options.key === undefined ? defaultKey : options.key
    if (key !== null && key !== undefined) headers.set("authorization", `Bearer ${key}`)
    let body: string | Uint8Array<ArrayBuffer> | undefined
    if (options.bytes !== undefined) body = new Uint8Array(options.bytes)
    else if (options.raw !== undefined) body = options.raw
    else if (options.body !== undefined) body = JSON.stringify(options.body)
    if (body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json")
    const init: RequestInit = body === undefined ? { method, headers } : { method, headers, body }
    const response = await handler(
      new Request(`http://svc.test${path}`, init),
      (options.clock === undefined ? Context.empty() : Context.make(Clock.Clock, options.clock)) as Context.Context<
        never
      >
    )
    const text = await response.text()
    let json: unknown
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      // not JSON: tests look at `text`
    }
    return { status: response.status, headers: response.headers, text, json }
  }
  const fetch: typeof globalThis.fetch = (input, init) =>
    handler(new Request(input, init), Context.empty() as Context.Context<never>)
  return {
    database: context,
    request,
    org,
    run,
    fetch,
    close: async () => {
      await dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

export interface ListeningServer {
  readonly port: number
  /** A new org with one API key. */
  readonly org: (name?: string) => Promise<{ readonly orgId: OrgId; readonly key: string }>
  readonly run: <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient | ApiKeys>) => Promise<A>
  readonly close: () => Promise<void>
}

/** The routes on a Node http server on a free port of 127.0.0.1, over a fresh database; `env` as for `start`. */
export const listen = async (env: Record<string, string> = {}): Promise<ListeningServer> => {
  const config = ConfigProvider.layer(
    ConfigProvider.fromEnv({ env: { ...(process.env as Record<string, string>), ...env } })
  )
  const scope = Scope.makeUnsafe()
  const context = await Effect.runPromise(
    Layer.buildWithScope(ApiKeys.layer.pipe(Layer.provideMerge(TestDatabase.layer), Layer.provide(config)), scope)
  )
  const served = HttpRouter.serve(Http.routes, { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => http.createServer(), { port: 0, host: "127.0.0.1" })),
    Layer.provide(Layer.succeedContext(context)),
    Layer.provide(config)
  )
  const built = await Effect.runPromise(Layer.buildWithScope(served, scope)).catch(async (error: unknown) => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  })
  const address = Context.get(built, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("the test server did not listen on TCP")
  const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient | ApiKeys>) =>
    Effect.runPromise(Effect.provideContext(effect, context))
  return {
    port: address.port,
    org: async (name = "test org") => {
      const orgId = await run(Effect.flatMap(ApiKeys, (keys) => keys.createOrg(name)))
      const key = await run(Effect.flatMap(ApiKeys, (keys) => keys.createKey(orgId)))
      return { orgId, key }
    },
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
