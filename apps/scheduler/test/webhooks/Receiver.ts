/**
 * A local webhook receiver for tests and the benchmark: a real HTTP server on 127.0.0.1 whose answer to each request
 * a test chooses (`respond`), recording every request (headers and raw body).
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** What to do with a request: answer a status (and body, headers), or never answer. */
export type Answer =
  | { readonly status: number; readonly body?: string | Buffer; readonly headers?: Record<string, string> }
  | "hang"

export interface Receiver {
  readonly url: (path?: string) => string
  readonly port: number
  readonly received: Array<Received>
  /** Answers whose connection closed before they were sent to their end (the client stopped reading). */
  readonly cutOff: number
  respond: (request: Received, index: number) => Answer
}

/** A receiver closed with the scope; answers 200 until `respond` is replaced. */
export const make = (options: { readonly record?: boolean } = {}) =>
  Effect.acquireRelease(
    Effect.callback<Receiver>((resume) => {
      const hanging = new Set<http.ServerResponse>()
      const receiver: Receiver = {
        url: (path = "/hook") => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
        port: 0,
        received: [],
        cutOff: 0,
        respond: () => ({ status: 200 })
      }
      let count = 0
      const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const request = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }
          if (options.record !== false) receiver.received.push(request)
          const answer = receiver.respond(request, count++)
          if (answer === "hang") {
            hanging.add(res)
            return
          }
          res.on("close", () => {
            if (!res.writableFinished) (receiver as { cutOff: number }).cutOff++
          })
          res.writeHead(answer.status, answer.headers)
          res.end(answer.body ?? "")
        })
      })
      ;(server as unknown as { hanging: Set<http.ServerResponse> }).hanging = hanging
      server.listen(0, "127.0.0.1", () => {
        ;(receiver as { port: number }).port = (server.address() as AddressInfo).port
        ;(receiver as unknown as { server: http.Server }).server = server
        resume(Effect.succeed(receiver))
      })
    }),
    (receiver) =>
      Effect.callback<void>((resume) => {
        const server = (receiver as unknown as { server: http.Server }).server
        for (const res of (server as unknown as { hanging: Set<http.ServerResponse> }).hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
