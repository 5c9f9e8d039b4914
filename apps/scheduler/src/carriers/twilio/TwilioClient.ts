/**
 * The part of Twilio's REST API the adapter uses (decision 0602), over the official SDK: create a call, fetch one, list
 * the calls between two numbers. Results are plain values; every failure is a `TwilioRequestError` carrying the
 * HTTP status (absent when no response arrived: a timeout or a broken connection) and Twilio's error code, which
 * `TwilioOutcome.createFailure` classifies.
 *
 * `make` takes the SDK's `httpClient` option: production passes none (the SDK's own client to api.twilio.com);
 * tests pass a `RequestClient` that sends the same requests to the local Twilio double. There is no test branch in
 * this file.
 */
import { TwilioCallStatus } from "@svc/domain/carrier/TwilioCallStatus.ts"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import twilio from "twilio"
import { type MachineDetection, TWILIO_API_URL, type TwilioSettings } from "./TwilioConfig.ts"

/**
 * A request to Twilio failed. `httpStatus` is absent when no response arrived (timeout, connection error).
 *
 * @category errors
 */
export class TwilioRequestError extends Schema.TaggedError<TwilioRequestError>()("TwilioRequestError", {
  httpStatus: Schema.optionalKey(Schema.Number),
  code: Schema.optionalKey(Schema.Number),
  message: Schema.String
}) {}

/**
 * A call resource, as far as the adapter reads it (epoch ms; durations in seconds).
 *
 * @category models
 */
export interface TwilioCall {
  readonly sid: string
  readonly status: TwilioCallStatus
  readonly to: string
  readonly from: string
  readonly dateCreated: number | null
  readonly startTime: number | null
  readonly endTime: number | null
  readonly durationS: number | null
  readonly answeredBy: string | null
}

/** @category models */
export interface CreateCall {
  readonly to: string
  readonly from: string
  readonly twiml: string
  readonly statusCallback: string
  readonly machineDetection: MachineDetection
  readonly ringTimeoutS: number
}

/** @category models */
export interface TwilioClientOptions {
  /** The SDK's `httpClient` option (default: the SDK's own client). */
  readonly httpClient?: InstanceType<typeof twilio.RequestClient> | undefined
  /** How long one request may take before it counts as unanswered (ms; the SDK's `timeout`). */
  readonly timeoutMs?: number | undefined
}

/** The longest a create request may take by default: after it, the call may or may not exist. */
export const DEFAULT_TIMEOUT_MS = 15_000

const isStatus = Schema.is(TwilioCallStatus)

interface SdkCall {
  readonly sid: string
  readonly status: string
  readonly to: string
  readonly from: string
  readonly dateCreated?: Date | null
  readonly startTime?: Date | null
  readonly endTime?: Date | null
  readonly duration?: string | null
  readonly answeredBy?: string | null
}

const time = (d: Date | null | undefined): number | null =>
  d instanceof Date && !Number.isNaN(d.getTime()) ? d.getTime() : null

const toCall = (c: SdkCall): TwilioCall => {
  const duration = c.duration === null || c.duration === undefined ? NaN : Number(c.duration)
  return {
    sid: c.sid,
    // a status this adapter does not know yet is treated as the earliest one: it moves nothing forward
    status: isStatus(c.status) ? c.status : "queued",
    to: c.to,
    from: c.from,
    dateCreated: time(c.dateCreated),
    startTime: time(c.startTime),
    endTime: time(c.endTime),
    durationS: Number.isFinite(duration) ? duration : null,
    answeredBy: c.answeredBy ?? null
  }
}

const requestError = (what: string) => (cause: unknown): TwilioRequestError => {
  if (cause instanceof twilio.RestException) {
    return new TwilioRequestError({
      httpStatus: cause.status,
      ...(cause.code === undefined ? {} : { code: cause.code }),
      message: `${what}: Twilio answered ${cause.status}${
        cause.code === undefined ? "" : ` (error ${cause.code})`
      }: ${cause.message}`
    })
  }
  // axios puts the status of an answer the SDK could not parse on `response`
  const status = (cause as { response?: { status?: unknown } } | null)?.response?.status
  return new TwilioRequestError({
    ...(typeof status === "number" ? { httpStatus: status } : {}),
    message: `${what}: no answer from Twilio: ${cause instanceof Error ? cause.message : String(cause)}`
  })
}

/**
 * The SDK's own request client with Twilio's API base replaced by `apiUrl` (`SVC_TWILIO_API_URL`): the requests,
 * their signing and their parsing stay the SDK's.
 */
const rebasedClient = (apiUrl: string, timeoutMs: number): InstanceType<typeof twilio.RequestClient> => {
  class RebasedClient extends twilio.RequestClient {
    override request<T>(opts: Parameters<InstanceType<typeof twilio.RequestClient>["request"]>[0]) {
      return super.request<T>({ ...opts, uri: opts.uri.replace(/^https:\/\/api\.twilio\.com/, apiUrl) } as never)
    }
  }
  return new RebasedClient({ timeout: timeoutMs })
}

/**
 * @category services
 */
export class TwilioClient extends Context.Service<TwilioClient, {
  readonly accountSid: string
  readonly create: (call: CreateCall) => Effect.Effect<TwilioCall, TwilioRequestError>
  readonly fetch: (sid: string) => Effect.Effect<TwilioCall, TwilioRequestError>
  /** Ends a call that has not been answered (`Status=canceled`; decision 0605). */
  readonly cancel: (sid: string) => Effect.Effect<TwilioCall, TwilioRequestError>
  /** The most recent calls from `from` to `to` (newest first, at most `limit`). */
  readonly list: (filter: { readonly to: string; readonly from: string; readonly limit: number }) => Effect.Effect<
    ReadonlyArray<TwilioCall>,
    TwilioRequestError
  >
}>()("@svc/scheduler/twilio/TwilioClient") {
  /**
   * The client for `settings`, with the SDK's `httpClient` option when given.
   *
   * @category constructors
   */
  static make(settings: TwilioSettings, options: TwilioClientOptions = {}): TwilioClient["Service"] {
    const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const httpClient = options.httpClient ??
      (settings.apiUrl === TWILIO_API_URL ? undefined : rebasedClient(settings.apiUrl, timeout))
    const opts = {
      accountSid: settings.accountSid,
      timeout,
      // 429s are the pacer's business (CarrierPacer.backoff tells every worker), not a per-request retry
      autoRetry: false,
      ...(httpClient === undefined ? {} : { httpClient })
    }
    const client = settings.credentials._tag === "AuthToken"
      ? twilio(settings.accountSid, Redacted.value(settings.credentials.authToken), opts)
      : twilio(settings.credentials.apiKey, Redacted.value(settings.credentials.apiSecret), opts)
    return TwilioClient.of({
      accountSid: settings.accountSid,
      create: (call) =>
        Effect.tryPromise({
          try: () =>
            client.calls.create({
              to: call.to,
              from: call.from,
              twiml: call.twiml,
              statusCallback: call.statusCallback,
              statusCallbackMethod: "POST",
              statusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
              timeout: call.ringTimeoutS,
              ...(call.machineDetection === "off" ? {} : { machineDetection: call.machineDetection })
            }),
          catch: requestError("create call")
        }).pipe(Effect.map(toCall)),
      fetch: (sid) =>
        Effect.tryPromise({ try: () => client.calls(sid).fetch(), catch: requestError(`fetch call ${sid}`) }).pipe(
          Effect.map(toCall)
        ),
      cancel: (sid) =>
        Effect.tryPromise({
          try: () => client.calls(sid).update({ status: "canceled" }),
          catch: requestError(`cancel call ${sid}`)
        }).pipe(Effect.map(toCall)),
      list: ({ from, limit, to }) =>
        Effect.tryPromise({
          try: () => client.calls.list({ to, from, limit, pageSize: Math.min(limit, 1000) }),
          catch: requestError("list calls")
        }).pipe(Effect.map((calls) => calls.map(toCall)))
    })
  }

  /**
   * The client on the SDK's own HTTP client.
   *
   * @category layers
   */
  static layer(settings: TwilioSettings, options: TwilioClientOptions = {}): Layer.Layer<TwilioClient> {
    return Layer.sync(TwilioClient, () => TwilioClient.make(settings, options))
  }
}
