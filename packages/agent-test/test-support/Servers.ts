/**
 * Servers for the runner's tests, on real sockets on localhost: the reference server (examples/custom-llm) as a child
 * process, and small WebSocket servers that inject one protocol fault each.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { type WebSocket, WebSocketServer } from "ws"

/** The reference server's script. */
export const referenceServerPath = path.resolve(import.meta.dirname, "../../../examples/custom-llm/server.mjs")

/** Starts the reference server on a free port; its `ws://` base URL. Stopped with the scope. */
export const referenceServer = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly kill: () => void }, Error>((resume) => {
    const child = spawn(process.execPath, [referenceServerPath, "--port", "0"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening on (ws:\/\/\S+)/.exec(out)
      if (match !== null) resume(Effect.succeed({ url: match[1]!, kill: () => child.kill("SIGTERM") }))
    })
    child.once("exit", (code) => resume(Effect.fail(new Error(`the reference server exited (${code}): ${out}`))))
  }),
  (server) => Effect.sync(server.kill)
).pipe(Effect.map((server) => server.url))

/** What a scripted fault server saw. */
export interface Seen {
  readonly received: Array<Record<string, unknown>>
  readonly closeCodes: Array<number>
  readonly paths: Array<string>
}

/** A WebSocket server on 127.0.0.1 whose behaviour per connection is `onConnection`; `seen` records the traffic. */
export const faultServer = (onConnection: (socket: WebSocket) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ url: string; server: WebSocketServer; seen: Seen }>((resume) => {
      const seen: Seen = { received: [], closeCodes: [], paths: [] }
      const server = new WebSocketServer({ port: 0, host: "127.0.0.1" })
      server.on("connection", (socket, request) => {
        seen.paths.push(request.url ?? "")
        socket.on("message", (data) => seen.received.push(JSON.parse(data.toString()) as Record<string, unknown>))
        socket.on("close", (code) => seen.closeCodes.push(code))
        onConnection(socket)
      })
      server.on("listening", () =>
        resume(Effect.succeed({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen })))
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        for (const client of server.clients) {
          client.terminate()
        }
        server.close(() =>
          resume(Effect.void)
        )
      })
  )

/** A fault server that answers each `response_required` with `answer(id, socket)`, after the begin message. */
export const scripted = (
  answer: (socket: WebSocket, frame: Record<string, unknown>) => void,
  greet: (socket: WebSocket) => void = (socket) =>
    socket.send(JSON.stringify({ response_type: "response", response_id: 0, content: "Hi", content_complete: true }))
) =>
  faultServer((socket) => {
    greet(socket)
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>
      if (frame["interaction_type"] === "response_required") answer(socket, frame)
    })
  })

/** An HTTP server that refuses every WebSocket upgrade with 503, counting the attempts. */
export const refusingServer = Effect.acquireRelease(
  Effect.callback<{ url: string; attempts: () => number; server: http.Server }>((resume) => {
    let attempts = 0
    const server = http.createServer((_request, response) => response.writeHead(503).end())
    server.on("upgrade", (_request, socket) => {
      attempts++
      socket.end("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({
        url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
        attempts: () => attempts,
        server
      })))
  }),
  ({ server }) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
)

/** Waits until `condition` holds, polling each turn of the event loop, at most `ms` (a bound, not a sleep). */
export const until = (condition: () => boolean, what: string, ms = 10_000) =>
  Effect.callback<void, Error>((resume) => {
    const started = performance.now()
    const check = () => {
      if (condition()) return resume(Effect.void)
      if (performance.now() - started > ms) return resume(Effect.fail(new Error(`timed out waiting for ${what}`)))
      setImmediate(check)
    }
    check()
  })
