// Issue 27, item 6: requests Node's HTTP parser refuses (raw non-UTF-8 bytes in the request line, a broken chunked
// encoding, a bad Content-Length) got Node's bare "400 Bad Request": no body, no x-request-id. The server's
// `clientError` handler (http/ClientErrors.ts) answers them in the error shape. Sent as raw bytes on a real socket to
// the Node server svc-server runs (Server.makeNodeServer), serving the real routes over a real database.
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { ConfigProvider, Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import * as net from "node:net"
import * as ClientErrors from "../../src/middleware/ClientErrors.ts"
import * as Http from "../../src/runtime/Http.ts"
import * as Server from "../../src/runtime/Server.ts"

let port: number
let key: string
const scope = Scope.makeUnsafe()

beforeAll(async () => {
  const config = ConfigProvider.layer(ConfigProvider.fromEnv({ env: process.env as Record<string, string> }))
  const context = await Effect.runPromise(
    Layer.buildWithScope(ApiKeys.layer.pipe(Layer.provideMerge(TestDatabase.layer), Layer.provide(config)), scope)
  )
  const served = HttpRouter.serve(Http.routes, { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => Server.makeNodeServer(), { port: 0, host: "127.0.0.1" })),
    Layer.provide(Layer.succeedContext(context)),
    Layer.provide(config)
  )
  const built = await Effect.runPromise(Layer.buildWithScope(served, scope))
  const address = Context.get(built, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("the test server did not listen on TCP")
  port = address.port
  key = await Effect.runPromise(Effect.provideContext(
    Effect.flatMap(ApiKeys, (keys) => Effect.flatMap(keys.createOrg("framing"), (org) => keys.createKey(org))),
    context
  ))
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

interface RawResponse {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}

/** Sends `bytes` as they are and reads until the server closes the connection (bounded by the test's timeout). */
const send = (bytes: Buffer): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(bytes))
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", reject)
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const end = text.indexOf("\r\n\r\n")
      if (end === -1) return reject(new Error(`no HTTP response, got ${JSON.stringify(text)}`))
      const [statusLine, ...lines] = text.slice(0, end).split("\r\n")
      const headers = new Map(lines.map((line) => {
        const colon = line.indexOf(":")
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const
      }))
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body: text.slice(end + 4) })
    })
  })

const latin1 = (text: string) => Buffer.from(text, "latin1")

const inErrorShape = (response: RawResponse, status: number, message: RegExp, what: string) => {
  const context = `${what}: ${response.status} ${JSON.stringify(Object.fromEntries(response.headers))} ${response.body}`
  assert.strictEqual(response.status, status, context)
  assert.strictEqual(response.headers.get("content-type"), "application/json", context)
  assert.match(response.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/, context)
  assert.strictEqual(Number(response.headers.get("content-length")), Buffer.byteLength(response.body), context)
  const body = JSON.parse(response.body) as { status: string; message: string }
  assert.deepStrictEqual(Object.keys(body).sort(), ["message", "status"], context)
  assert.strictEqual(body.status, "error", context)
  assert.match(body.message, message, context)
}

describe("requests the HTTP parser refuses", () => {
  it("raw bytes outside ASCII in the request line: 400 in the error shape with a request id", async () => {
    const response = await send(latin1("GET /get-contact/\xff\xfe HTTP/1.1\r\nHost: svc\r\n\r\n"))
    inErrorShape(response, 400, /^the request target is not valid HTTP/, "non-UTF-8 target")
  })

  it("a broken chunked encoding: 400 in the error shape", async () => {
    const response = await send(latin1(
      "POST /list-contacts HTTP/1.1\r\nHost: svc\r\n" +
        `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
        "zz\r\n{}\r\n0\r\n\r\n"
    ))
    inErrorShape(response, 400, /^the chunked request body is malformed \(/, "broken chunk size")
  })

  it("a bad Content-Length, or one sent with chunked: 400 in the error shape", async () => {
    const bad = await send(latin1("POST /list-contacts HTTP/1.1\r\nHost: svc\r\nContent-Length: abc\r\n\r\n{}"))
    inErrorShape(bad, 400, /^Content-Length is not valid: send one decimal number of bytes/, "Content-Length abc")
    const both = await send(latin1(
      "POST /list-contacts HTTP/1.1\r\nHost: svc\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "2\r\n{}\r\n0\r\n\r\n"
    ))
    inErrorShape(
      both,
      400,
      /^Transfer-Encoding is not valid \(Transfer-Encoding can't be present with Content-Length\): send /,
      "Content-Length with chunked"
    )
  })

  it("a malformed method or header, and headers over Node's limit: 400 in the error shape", async () => {
    inErrorShape(
      await send(latin1("G\x01T / HTTP/1.1\r\nHost: svc\r\n\r\n")),
      400,
      /not valid HTTP/,
      "method"
    )
    inErrorShape(
      await send(latin1("GET /healthz HTTP/1.1\r\nHost: svc\r\nBad Header: x\r\n\r\n")),
      400,
      /^a request header is not valid HTTP/,
      "header name with a space"
    )
    inErrorShape(
      await send(latin1(`GET /healthz HTTP/1.1\r\nHost: svc\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)),
      400,
      /^the request's headers are larger than the \d+ bytes/,
      "header overflow"
    )
  })

  it("a body sent without a Content-Type is refused at once, from its headers", async () => {
    const response = await send(latin1(
      `PATCH /v2/update-call/x HTTP/1.1\r\nHost: svc\r\nAuthorization: Bearer ${key}\r\nContent-Length: 2\r\n` +
        "Connection: close\r\n\r\n{}"
    ))
    inErrorShape(response, 400, /^Content-Type is missing: send the request body with Content-Type/, "no type")
  })

  it("the server keeps serving: a well-formed request after them is answered", async () => {
    const response = await send(latin1("GET /healthz HTTP/1.1\r\nHost: svc\r\nConnection: close\r\n\r\n"))
    assert.strictEqual(response.status, 200)
  })
})

describe("the answer", () => {
  it("is Node's status for each llhttp error, in the error shape; the timeout a 408 the client may retry", () => {
    assert.deepStrictEqual(ClientErrors.refusalOf({ code: "ERR_HTTP_REQUEST_TIMEOUT" }).status, 408)
    assert.strictEqual(
      ClientErrors.refusalOf({ code: "HPE_SOMETHING_NEW", reason: "Odd" }).message,
      "the request is not valid HTTP/1.1 (Odd)"
    )
    const text = ClientErrors.responseText({ status: 400, message: "é" }, "id-1")
    assert.isTrue(text.startsWith("HTTP/1.1 400 Bad Request\r\n"))
    assert.include(text, "Content-Length: 33\r\n")
    assert.isTrue(text.endsWith("\r\n\r\n{\"status\":\"error\",\"message\":\"é\"}"))
  })
})
