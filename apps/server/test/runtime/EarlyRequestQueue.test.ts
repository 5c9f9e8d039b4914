import { assert, describe, it } from "@effect/vitest"
import type * as http from "node:http"
import type * as net from "node:net"
import { createServer } from "../../src/runtime/EarlyRequestQueue.ts"

const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port))
  )

const close = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

/**
 * Resolves once `n` connections have sent their request bytes. A socket's own `data` listener runs after the
 * http parser's (registered first), so by then the server has emitted `request`. (A `request` listener cannot
 * be used here: it would be taken for the handler.)
 */
const received = (server: http.Server, n: number) =>
  new Promise<void>((resolve) => {
    let seen = 0
    server.on("connection", (socket: net.Socket) => {
      socket.once("data", () => {
        if (++seen === n) resolve()
      })
    })
  })

describe("EarlyRequestQueue", () => {
  it("answers requests that arrived before the handler was attached, in arrival order", async () => {
    const server = createServer()
    const port = await listen(server)
    try {
      const firstArrived = received(server, 1)
      const arrived = received(server, 2)
      const first = fetch(`http://127.0.0.1:${port}/first`).then((r) => r.text())
      // the second is sent once the first's bytes are at the server (was: 20 ms later, a bet on the machine)
      await firstArrived
      const second = fetch(`http://127.0.0.1:${port}/second`).then((r) => r.text())
      await arrived
      const order: Array<string> = []
      server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
        order.push(request.url ?? "")
        response.end(`served ${request.url}`)
      })
      assert.deepStrictEqual(await Promise.all([first, second]), ["served /first", "served /second"])
      assert.deepStrictEqual(order, ["/first", "/second"])
    } finally {
      await close(server)
    }
  })

  it("behaves as a plain server once serving: one handler call per request, none held", async () => {
    const server = createServer()
    const port = await listen(server)
    try {
      let calls = 0
      server.on("request", (_request: http.IncomingMessage, response: http.ServerResponse) => {
        calls++
        response.end("ok")
      })
      assert.strictEqual(server.listenerCount("request"), 1, "the holding listener is gone")
      assert.strictEqual(server.listenerCount("newListener"), 0)
      for (let i = 0; i < 3; i++) assert.strictEqual(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "ok")
      assert.strictEqual(calls, 3)
    } finally {
      await close(server)
    }
  })
})
