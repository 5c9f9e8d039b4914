/**
 * The Twilio side of the adapter's tests (issue 28, item 5): the Twilio double, svc-server's real routes (and so its
 * real `POST /carrier/twilio/status`: signature check, form decoding, `applyStatus`, the middleware every request
 * goes through) on a local port over the test's own database, and the scheduler's adapter on both.
 *
 * The adapter gives Twilio `${PUBLIC_URL}/carrier/twilio/status?key=…` and the server is configured with the same
 * SVC_PUBLIC_URL; the double delivers each callback to the server's local port as a proxy in front of it would, signed
 * over the public URL (decision 0606). The scheduler's tests could not do this from apps/scheduler (apps never import
 * each other: tools/dependency-rule/rule.js); tools/ composes both apps.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Dialer } from "@svc/domain/ports/Dialer.ts"
import { CarrierPacer } from "@svc/scheduler/carriers/pacing/CarrierPacer.ts"
import { TwilioClient } from "@svc/scheduler/carriers/twilio/TwilioClient.ts"
import { type MachineDetection, TWILIO_API_URL } from "@svc/scheduler/carriers/twilio/TwilioConfig.ts"
import * as TwilioDialer from "@svc/scheduler/carriers/twilio/TwilioDialer.ts"
import * as Http from "@svc/server/runtime/Http.ts"
import { ConfigProvider, Context, Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import * as http from "node:http"
import {
  ACCOUNT,
  type CallbackMode,
  type CallbackRecord,
  type Step,
  TOKEN,
  TwilioDouble
} from "../../../apps/scheduler/test/fixtures/TwilioDouble.ts"

export { ACCOUNT, TOKEN }

/** Where Twilio reaches svc-server in these tests (SVC_PUBLIC_URL of both sides); the double routes it locally. */
export const PUBLIC_URL = "https://svc.example.com"

export const OPTIONS: TwilioDialer.TwilioDialerOptions = {
  pollMs: 100,
  fetchAfterMs: 300,
  createSettledMs: 1_000,
  listSlackMs: 60_000,
  backoffMs: 5,
  backoffMaxMs: 30_000,
  maxRateLimited: 5
}
export const REQUEST_TIMEOUT_MS = 400

/**
 * svc-server's routes served on a free local port, over the database of the surrounding `SqlClient`, with
 * TWILIO_AUTH_TOKEN and SVC_PUBLIC_URL set for the double's account; closed with the scope. Returns its base URL.
 */
export const statusServer = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = ConfigProvider.layer(ConfigProvider.fromEnv({
    env: { ...(process.env as Record<string, string>), TWILIO_AUTH_TOKEN: TOKEN, SVC_PUBLIC_URL: PUBLIC_URL }
  }))
  const served = HttpRouter.serve(Http.routes, {
    disableListenLog: true,
    disableLogger: true,
    routerConfig: Http.routerConfig
  }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => http.createServer(), { port: 0, host: "127.0.0.1" })),
    Layer.provide(Layer.succeed(SqlClient.SqlClient, sql)),
    Layer.provide(config)
  )
  const context = yield* Layer.build(served).pipe(Effect.orDie)
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("the status server did not listen on TCP"))
  return `http://127.0.0.1:${address.port}`
})

/** The callbacks the double sent, and how svc-server answered them (`null`: no answer yet). */
export const answers = (callbacks: ReadonlyArray<CallbackRecord>) => callbacks.map((c) => c.httpStatus)

export interface TwilioSide {
  readonly double: TwilioDouble
  readonly dialer: Dialer["Service"]
  readonly client: TwilioClient["Service"]
}

/** A double, svc-server behind the public URL, and the adapter on them (closed with the scope). */
export const twilioSide = (
  setup: {
    readonly script?: (to: string) => ReadonlyArray<Step>
    readonly callbacks?: CallbackMode
    readonly machineDetection?: MachineDetection
    readonly ringTimeoutS?: number
    readonly options?: Partial<TwilioDialer.TwilioDialerOptions>
    readonly pacer?: Layer.Layer<CarrierPacer>
  } = {}
) =>
  Effect.gen(function*() {
    const double = yield* TwilioDouble.make(ACCOUNT, TOKEN)
    if (setup.script !== undefined) double.script = setup.script
    double.callbackMode = setup.callbacks ?? "inOrder"
    double.routeCallbacks(PUBLIC_URL, yield* statusServer)
    const settings = {
      publicUrl: PUBLIC_URL,
      sipServer: "agents.example.com:5060",
      machineDetection: setup.machineDetection ?? "off",
      ringTimeoutS: setup.ringTimeoutS ?? 30
    }
    const client = TwilioClient.make(
      {
        ...settings,
        accountSid: ACCOUNT,
        credentials: { _tag: "AuthToken", authToken: Redacted.make(TOKEN) },
        apiUrl: TWILIO_API_URL
      },
      { httpClient: double.requestClient(REQUEST_TIMEOUT_MS), timeoutMs: REQUEST_TIMEOUT_MS }
    )
    const context = yield* Layer.build(
      TwilioDialer.layerWith(settings, { ...OPTIONS, ...setup.options }).pipe(
        Layer.provide(Layer.succeed(TwilioClient, client)),
        Layer.provide(setup.pacer ?? CarrierPacer.layerUnpaced)
      )
    )
    return { double, dialer: Context.get(context, Dialer), client } satisfies TwilioSide
  })

/** A pacer that paces nothing and records what the adapter asked of it. */
export const recordingPacer = () => {
  const calls: Array<readonly ["acquire" | "backoff", string, number?]> = []
  const layer = Layer.succeed(CarrierPacer, {
    acquire: (account) => Effect.sync(() => void calls.push(["acquire", account])),
    backoff: (account, ms) => Effect.sync(() => void calls.push(["backoff", account, ms]))
  })
  return { calls, layer }
}
