/**
 * A customer's pre-dial receiver for tests: a real HTTP server on 127.0.0.1 that records every check (headers, raw
 * body) and answers as the test says: at once (`respond`), or never until the test releases the held request
 * (`"hold"`), or never at all (`"hang"`: a receiver that accepts the connection and says nothing). `stop` closes the
 * port and `restart` opens the same port again (a receiver that is down, then back).
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Check {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

export type Reply = { readonly status: number; readonly body?: string } | "hold" | "hang"

export interface PredialReceiver {
  readonly url: string
  readonly checks: Array<Check>
  respond: (check: Check) => Reply
  /** Answers the requests held so far. */
  readonly release: (reply: { readonly status: number; readonly body?: string }) => void
  readonly held: () => number
  readonly stop: Effect.Effect<void>
  readonly restart: Effect.Effect<void>
}

/** `{"allow": true}` with 200. */
export const allow = { status: 200, body: JSON.stringify({ allow: true }) } as const

/** A receiver closed with the scope; allows every dial until `respond` is replaced. */
export const make = Effect.acquireRelease(
  Effect.callback<PredialReceiver & { readonly server: { current: http.Server } }>((resume) => {
    const held: Array<http.ServerResponse> = []
    const sockets = new Set<http.ServerResponse>()
    const handler: http.RequestListener = (req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const check = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }
        receiver.checks.push(check)
        const reply = receiver.respond(check)
        if (reply === "hang") {
          sockets.add(res)
          return
        }
        if (reply === "hold") {
          held.push(res)
          return
        }
        res.writeHead(reply.status, { "content-type": "application/json" })
        res.end(reply.body ?? "")
      })
    }
    const server = { current: http.createServer(handler) }
    let port = 0
    const close = Effect.callback<void>((done) => {
      for (const res of [...held, ...sockets]) res.destroy()
      held.length = 0
      sockets.clear()
      server.current.closeAllConnections()
      server.current.close(() => done(Effect.void))
    })
    const receiver = {
      url: "",
      checks: [] as Array<Check>,
      respond: (_: Check): Reply => allow,
      release: (reply: { readonly status: number; readonly body?: string }) => {
        for (const res of held.splice(0)) {
          res.writeHead(reply.status, { "content-type": "application/json" })
          res.end(reply.body ?? "")
        }
      },
      held: () => held.length,
      stop: close,
      restart: Effect.callback<void>((done) => {
        server.current = http.createServer(handler)
        server.current.listen(port, "127.0.0.1", () => done(Effect.void))
      }),
      server
    }
    server.current.listen(0, "127.0.0.1", () => {
      port = (server.current.address() as AddressInfo).port
      receiver.url = `http://127.0.0.1:${port}/predial`
      resume(Effect.succeed(receiver))
    })
  }),
  (receiver) => receiver.server.current.listening ? receiver.stop : Effect.void
)
