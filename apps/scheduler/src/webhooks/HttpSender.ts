/**
 * One webhook POST (decisions 0523 and 0524: no redirects followed; response bodies read up to a small cap, within
 * `webhook_timeout_ms`; decision 0523 for the address rule). Node's own `http`/`https`, because the address check
 * must run where the socket resolves its host (`lookup`), which fetch does not expose:
 *
 * - the host is resolved once, by the connection itself, and every address it resolves to is checked
 *   (AddressPolicy) before connecting; an IP literal (which skips `lookup`) is checked before the request;
 * - redirects are answers like any other non-2xx (Node never follows them): the worker retries, the Location is not
 *   visited;
 * - at most `RESPONSE_CAP` bytes of the response are read; a longer body closes the connection;
 * - the whole attempt (connect, send, response, body) has one deadline, `timeoutMs`, on Effect's `Clock` (so tests
 *   pin it with `TestClock`; the request is destroyed when the deadline interrupts it);
 * - keep-alive agents, so a steady stream to one receiver reuses its connections (the 2,000 events/s goal).
 *
 * Never fails: every failure is a result with `error`, which the worker turns into a retry.
 */
import { Effect, Scope } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { refusal } from "./AddressPolicy.ts"

/** Bytes of a response read at most (the receiver's answer is only kept for `webhook-deliveries`). */
export const RESPONSE_CAP = 4096

/** @category models */
export interface SendRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
}

/** @category models */
export interface SendResult {
  /** The HTTP status, when a response arrived. */
  readonly status: number | undefined
  /** Why there is no usable response, or the start of a non-2xx response's body. */
  readonly error: string | undefined
  /** No retry can help: the address is refused. */
  readonly refused: boolean
  /** The response's body as read (at most `RESPONSE_CAP` bytes), when a response arrived: the pre-dial check's answer. */
  readonly body?: string
}

/** @category models */
export type Send = (request: SendRequest) => Effect.Effect<SendResult>

class Refused extends Error {
  readonly code = "ESVCREFUSED"
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | Array<dns.LookupAddress>,
  family?: number
) => void

/** `dns.lookup` that fails when any address of the name is refused. */
const guardedLookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err !== null) return callback(err, "")
    const list = addresses as unknown as Array<dns.LookupAddress>
    for (const a of list) {
      const why = refusal(a.address)
      if (why !== undefined) {
        return callback(new Refused(`${hostname} resolves to ${why.replace(/^\S+ /, `${a.address} `)}`), "")
      }
    }
    if (list.length === 0) {
      return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "")
    }
    if (options.all === true) return callback(null, list)
    callback(null, list[0]!.address, list[0]!.family)
  })
}

const describe = (error: unknown): string => {
  if (error instanceof Refused) return `refused: ${error.message}`
  const e = error as NodeJS.ErrnoException
  return e.code !== undefined ? `${e.code}: ${e.message}` : String(e.message ?? error)
}

/**
 * A sender with its own keep-alive agents, closed with the scope. `allowPrivate` lifts the address rule
 * (`SVC_WEBHOOK_ALLOW_PRIVATE=true`: tests and local use).
 *
 * @category constructors
 */
export const make = (options: { readonly allowPrivate: boolean; readonly maxSockets?: number }) =>
  Effect.gen(function*() {
    const agentOptions: http.AgentOptions = {
      keepAlive: true,
      maxSockets: options.maxSockets ?? 256,
      ...(options.allowPrivate ? {} : { lookup: guardedLookup as unknown as net.LookupFunction })
    }
    const httpAgent = new http.Agent(agentOptions)
    const httpsAgent = new https.Agent(agentOptions)
    yield* Scope.addFinalizer(
      yield* Effect.scope,
      Effect.sync(() => {
        httpAgent.destroy()
        httpsAgent.destroy()
      })
    )

    const send: Send = (request) =>
      Effect.callback<SendResult>((resume, signal) => {
        let settled = false
        const finish = (result: SendResult) => {
          if (settled) return
          settled = true
          resume(Effect.succeed(result))
        }
        let url: URL
        try {
          url = new URL(request.url)
        } catch {
          return finish({ status: undefined, error: `invalid url ${request.url}`, refused: true })
        }
        const host = url.hostname.replace(/^\[|\]$/g, "")
        if (!options.allowPrivate && net.isIP(host) !== 0) {
          const why = refusal(host)
          if (why !== undefined) return finish({ status: undefined, error: `refused: ${why}`, refused: true })
        }
        const client = url.protocol === "https:" ? https : http
        const req = client.request(url, {
          method: "POST",
          agent: url.protocol === "https:" ? httpsAgent : httpAgent,
          headers: {
            ...request.headers,
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(request.body))
          }
        })
        req.on("error", (error) =>
          finish({ status: undefined, error: describe(error), refused: error instanceof Refused }))
        req.on("response", (res) => {
          const status = res.statusCode ?? 0
          const chunks: Array<Buffer> = []
          let size = 0
          const done = () => {
            const all = Buffer.concat(chunks)
            const text = all.subarray(0, 512).toString("utf8")
            finish({
              status,
              error: status >= 200 && status < 300 ? undefined : (text === "" ? `HTTP ${status}` : text),
              refused: false,
              body: all.toString("utf8")
            })
          }
          res.on("data", (chunk: Buffer) => {
            size += chunk.length
            if (size <= RESPONSE_CAP) {
              chunks.push(chunk)
            } else {
              // past the cap: the answer is known, the rest is not read (the connection is closed)
              res.destroy()
              done()
            }
          })
          res.on("end", done)
          res.on("error", () =>
            done())
          res.on("close", done)
        })
        signal.addEventListener("abort", () => req.destroy())
        req.end(request.body)
      }).pipe(
        // the deadline: interrupting the attempt aborts its signal, which destroys the request
        Effect.timeoutOrElse({
          duration: request.timeoutMs,
          orElse: () =>
            Effect.succeed<SendResult>({
              status: undefined,
              error: `ETIMEDOUT: no answer within ${request.timeoutMs} ms`,
              refused: false
            })
        })
      )

    return send
  })
