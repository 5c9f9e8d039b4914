/**
 * A Node http server that holds the requests it receives before its handler is attached.
 *
 * Why: `NodeHttpServer.layer` listens when its layer is built, and `HttpRouter.serve` attaches the request
 * handler later, once the routes' layers are built. A request that arrives in between (a load balancer's
 * health probe, an orchestrator's readiness check, a client retrying during a rolling restart) meets a server
 * with no `request` listener: Node accepts the connection and never answers it. In `npm start` the scheduler's
 * start-up work widens that window, and a probe hung until its client gave up.
 *
 * Here such requests wait and are handed to the first handler attached, in arrival order; from then on the
 * server behaves as a plain `http.Server`.
 */
import * as http from "node:http"

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void

/**
 * `http.createServer` whose early requests wait for the first `request` handler.
 *
 * @category constructors
 */
export const createServer = (options: http.ServerOptions = {}): http.Server => {
  const server = http.createServer(options)
  const waiting: Array<readonly [http.IncomingMessage, http.ServerResponse]> = []
  const hold: Handler = (request, response) => {
    waiting.push([request, response])
  }
  const onNewListener = (event: string | symbol, listener: unknown) => {
    if (event !== "request" || listener === hold) return
    server.off("newListener", onNewListener)
    server.off("request", hold)
    const handler = listener as Handler
    // after the handler is registered (newListener fires before), and before any newer request is read
    process.nextTick(() => {
      for (const [request, response] of waiting.splice(0)) handler.call(server, request, response)
    })
  }
  server.on("request", hold)
  server.on("newListener", onNewListener)
  return server
}
