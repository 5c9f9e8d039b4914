// Request bodies are bounded per endpoint and per process (issue 16, item 3; decision 0303), on a real socket:
// an over-limit body is refused as soon as its Content-Length says so, or, sent chunked, as soon as its bytes
// pass the limit (before it ends), with a 400 naming the endpoint's limit; a body that does not fit in the
// process's budget while others arrive is refused with 503 and Retry-After; nothing of a refused create is stored.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { eventually } from "@svc/runtime/test-support/Waiting.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as http from "node:http"
import * as TestServer from "../support/TestServer.ts"

const KiB = 1024
const MiB = 1024 * KiB
const FROM = "+14155550100"

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly message: string
}

/**
 * Sends a request whose body is `parts`, written one after another; ends it only when `end` is set. Resolves with
 * the answer as soon as it arrives (the rest of the body may never be sent), or "no answer" after `waitMs`.
 */
const send = (
  port: number,
  options: {
    readonly method: string
    readonly path: string
    readonly key: string
    readonly contentLength?: number
    readonly parts: ReadonlyArray<Buffer>
    readonly end: boolean
    readonly waitMs?: number
  }
) =>
  new Promise<Answer | "no answer">((resolve) => {
    const request = http.request({
      host: "127.0.0.1",
      port,
      method: options.method,
      path: options.path,
      headers: {
        authorization: `Bearer ${options.key}`,
        "content-type": "application/json",
        ...(options.contentLength === undefined ? {} : { "content-length": options.contentLength })
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        clearTimeout(timer)
        const text = Buffer.concat(chunks).toString("utf8")
        let message = text
        try {
          message = (JSON.parse(text) as { message: string }).message
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, message })
        request.destroy()
      })
    })
    // the server may close the connection while the client still writes: that is the point
    request.on("error", () => {})
    const timer = setTimeout(() => {
      request.destroy()
      resolve("no answer")
    }, options.waitMs ?? 5_000)
    for (const part of options.parts) request.write(part)
    if (options.end) request.end()
    else request.flushHeaders()
  })

/** `json` followed by spaces up to exactly `size` bytes (JSON allows whitespace after the value). */
const padded = (json: string, size: number): Buffer => {
  const bytes = Buffer.from(json)
  if (bytes.length > size) throw new Error(`${bytes.length} bytes do not fit in ${size}`)
  return Buffer.concat([bytes, Buffer.alloc(size - bytes.length, 0x20)])
}

/** A valid create-batch-call of about `size` bytes (unpadded), its tasks distinct. */
const batchJson = (size: number) => {
  const task = (i: number) =>
    JSON.stringify({ to_number: `+1212${String(i).padStart(7, "0")}`, metadata: { row: String(i).padStart(7, "0") } })
  const perTask = task(0).length + 1
  const count = Math.max(1, Math.floor((size - 60) / perTask))
  return `{"from_number":"${FROM}","tasks":[${Array.from({ length: count }, (_, i) => task(i)).join(",")}]}`
}

const inFlight = async (port: number) => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith("svc_http_inflight_body_bytes"))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

const storedBatches = (server: TestServer.ListeningServer, orgId: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ batches: number; tasks: number }>`
      SELECT (SELECT count(*)::int4 FROM batch_calls WHERE org_id = ${orgId}) AS batches,
        (SELECT count(*)::int4 FROM batch_call_tasks WHERE org_id = ${orgId}) AS tasks`
    return row!
  }))

const withNumber = async (server: TestServer.ListeningServer) => {
  const org = await server.org()
  await server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org.orgId}, ${FROM}, 0)`
  }))
  return org
}

describe("body limit per endpoint", () => {
  let server: TestServer.ListeningServer
  let org: { readonly orgId: string; readonly key: string }
  beforeAll(async () => {
    server = await TestServer.listen({ SVC_MAX_BODY_BYTES: String(2 * MiB) })
    org = await withNumber(server)
  })
  afterAll(() => server.close())

  const endpoints = [
    {
      method: "POST",
      path: "/list-contacts",
      name: "POST /list-contacts",
      bytes: 64 * KiB,
      setting: "SVC_MAX_SMALL_BODY_BYTES"
    },
    {
      method: "POST",
      path: "/backfill-contact-analysis-data",
      name: "POST /backfill-contact-analysis-data",
      bytes: 64 * KiB,
      setting: "SVC_MAX_SMALL_BODY_BYTES"
    },
    {
      method: "POST",
      path: "/create-contact",
      name: "POST /create-contact",
      bytes: MiB,
      setting: "SVC_MAX_CONTACT_BODY_BYTES"
    },
    {
      method: "PATCH",
      path: "/update-contact/contact_1",
      name: "PATCH /update-contact",
      bytes: MiB,
      setting: "SVC_MAX_CONTACT_BODY_BYTES"
    },
    {
      method: "POST",
      path: "/create-batch-call",
      name: "POST /create-batch-call",
      bytes: 2 * MiB,
      setting: "SVC_MAX_BODY_BYTES"
    }
  ] as const

  const refusal = (e: typeof endpoints[number]) =>
    `request body is larger than the ${e.bytes} bytes (${
      e.bytes >= MiB ? `${e.bytes / MiB} MiB` : `${e.bytes / KiB} KiB`
    }) ` +
    `that ${e.name} accepts (${e.setting})`

  it("refuses a Content-Length over the endpoint's limit at once, reading none of the body", async () => {
    for (const endpoint of endpoints) {
      // one byte over, and only 100 bytes of it ever sent: the answer cannot wait for the body
      const answer = await send(server.port, {
        method: endpoint.method,
        path: endpoint.path,
        key: org.key,
        contentLength: endpoint.bytes + 1,
        parts: [Buffer.alloc(100, 0x20)],
        end: false
      })
      assert.notStrictEqual(answer, "no answer", endpoint.name)
      if (answer === "no answer") continue
      assert.strictEqual(answer.status, 400, endpoint.name)
      assert.strictEqual(answer.message, refusal(endpoint))
      assert.strictEqual(answer.headers.connection, "close")
    }
  })

  it("refuses a chunked body as soon as its bytes pass the limit, before it ends", async () => {
    for (const endpoint of endpoints) {
      const size = endpoint.bytes + 16 * KiB
      const answer = await send(server.port, {
        method: endpoint.method,
        path: endpoint.path,
        key: org.key,
        parts: Array.from({ length: size / (16 * KiB) }, () => Buffer.alloc(16 * KiB, 0x20)),
        end: false
      })
      assert.notStrictEqual(answer, "no answer", endpoint.name)
      if (answer === "no answer") continue
      assert.strictEqual(answer.status, 400, endpoint.name)
      assert.strictEqual(answer.message, refusal(endpoint))
    }
  })

  it("takes a body of exactly the limit, with or without a Content-Length", async () => {
    const list = padded(JSON.stringify({ limit: 1 }), 64 * KiB)
    const contact = padded(
      JSON.stringify({ phone_number: "+14155550177", custom_fields: { notes: "n".repeat(900 * KiB) } }),
      MiB
    )
    const batch = padded(batchJson(2 * MiB - 100), 2 * MiB)
    for (
      const [path, body, status] of [
        ["/list-contacts", list, 200],
        ["/create-contact", contact, 201],
        ["/create-batch-call", batch, 200]
      ] as const
    ) {
      const declared = await send(server.port, {
        method: "POST",
        path,
        key: org.key,
        contentLength: body.length,
        parts: [body],
        end: true,
        waitMs: 60_000
      })
      assert.strictEqual(declared === "no answer" ? declared : declared.status, status, path)
      if (path === "/create-contact") continue // one contact per number
      const chunked = await send(server.port, {
        method: "POST",
        path,
        key: org.key,
        parts: [body.subarray(0, 1000), body.subarray(1000)],
        end: true,
        waitMs: 60_000
      })
      assert.strictEqual(chunked === "no answer" ? chunked : chunked.status, status, path)
    }
  })

  it("answers a create-batch-call whose JSON breaks early while the rest of it is still coming", async () => {
    const broken = Buffer.from(`{"from_number":"${FROM}","tasks":[{"to_number":"+14155550101"},}`)
    const answer = await send(server.port, {
      method: "POST",
      path: "/create-batch-call",
      key: org.key,
      contentLength: MiB,
      parts: [broken],
      end: false
    })
    assert.notStrictEqual(answer, "no answer")
    if (answer === "no answer") return
    assert.strictEqual(answer.status, 400)
    assert.strictEqual(answer.message, "request body: Expected a valid JSON body")
  })

  it("stores nothing of a create-batch-call refused half way through its chunked body", async () => {
    const other = await withNumber(server)
    const body = Buffer.from(batchJson(3 * MiB))
    const answer = await send(server.port, {
      method: "POST",
      path: "/create-batch-call",
      key: other.key,
      parts: Array.from(
        { length: Math.ceil(body.length / (64 * KiB)) },
        (_, i) => body.subarray(i * 64 * KiB, (i + 1) * 64 * KiB)
      ),
      end: false
    })
    assert.strictEqual(answer === "no answer" ? answer : answer.status, 400)
    assert.deepStrictEqual(await storedBatches(server, other.orgId), { batches: 0, tasks: 0 })
  })
})

describe("in-flight body budget", () => {
  let server: TestServer.ListeningServer
  let org: { readonly orgId: string; readonly key: string }
  beforeAll(async () => {
    server = await TestServer.listen({
      SVC_MAX_BODY_BYTES: String(2 * MiB),
      SVC_MAX_INFLIGHT_BODY_BYTES: String(3 * MiB)
    })
    org = await withNumber(server)
  })
  afterAll(() => server.close())

  /** Starts a create-batch-call of 2 MiB declared, sends half of it and holds the rest: 2 MiB of the budget held. */
  const holdTwoMiB = async () => {
    const body = padded(batchJson(2 * MiB - 100), 2 * MiB)
    const request = http.request({
      host: "127.0.0.1",
      port: server.port,
      method: "POST",
      path: "/create-batch-call",
      headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", "content-length": body.length }
    })
    const answered = new Promise<number>((resolve) => {
      request.on("response", (response) => {
        response.resume()
        response.on("end", () => resolve(response.statusCode ?? 0))
      })
      request.on("error", () => resolve(-1))
    })
    request.write(body.subarray(0, MiB))
    await eventually(async () => (await inFlight(server.port)) >= 2 * MiB, "2 MiB of bodies in flight", {
      timeoutMs: 5_000,
      everyMs: 10
    })
    return {
      finish: () => {
        request.end(body.subarray(MiB))
        return answered
      },
      abort: () => request.destroy()
    }
  }

  it("answers 503 with Retry-After to a body that does not fit while others arrive, and takes it after", async () => {
    const held = await holdTwoMiB()
    const second = padded(batchJson(MiB + 400 * KiB), MiB + 512 * KiB)
    const refused = await send(server.port, {
      method: "POST",
      path: "/create-batch-call",
      key: org.key,
      contentLength: second.length,
      parts: [second.subarray(0, 100)],
      end: false
    })
    assert.notStrictEqual(refused, "no answer")
    if (refused === "no answer") return
    assert.strictEqual(refused.status, 503)
    assert.strictEqual(refused.headers["retry-after"], "5")
    assert.strictEqual(refused.headers.connection, "close")
    assert.strictEqual(
      refused.message,
      "the server is receiving as many request bodies as it holds at once (SVC_MAX_INFLIGHT_BODY_BYTES, 3 MiB); " +
        "retry in 5 seconds"
    )
    // what still fits is served meanwhile
    const small = await send(server.port, {
      method: "POST",
      path: "/list-contacts",
      key: org.key,
      contentLength: 2,
      parts: [Buffer.from("{}")],
      end: true
    })
    assert.strictEqual(small === "no answer" ? small : small.status, 200)
    assert.strictEqual(await held.finish(), 200)
    await eventually(async () => (await inFlight(server.port)) === 0, "no body bytes in flight", {
      timeoutMs: 5_000,
      everyMs: 10
    })
    const retried = await send(server.port, {
      method: "POST",
      path: "/create-batch-call",
      key: org.key,
      contentLength: second.length,
      parts: [second],
      end: true
    })
    assert.strictEqual(retried === "no answer" ? retried : retried.status, 200)
  })

  it("answers 503 to a chunked create-batch-call once its bytes no longer fit, and gives them back", async () => {
    const held = await holdTwoMiB()
    const body = Buffer.from(batchJson(MiB + 512 * KiB))
    const refused = await send(server.port, {
      method: "POST",
      path: "/create-batch-call",
      key: org.key,
      parts: Array.from(
        { length: Math.ceil(body.length / (64 * KiB)) },
        (_, i) => body.subarray(i * 64 * KiB, (i + 1) * 64 * KiB)
      ),
      end: false
    })
    assert.strictEqual(refused === "no answer" ? refused : refused.status, 503)
    assert.strictEqual(await held.finish(), 200)
    await eventually(async () => (await inFlight(server.port)) === 0, "no body bytes in flight", {
      timeoutMs: 5_000,
      everyMs: 10
    })
  })

  it("gives the bytes back when a client goes away in the middle of its body", async () => {
    const held = await holdTwoMiB()
    held.abort()
    await eventually(async () => (await inFlight(server.port)) === 0, "no body bytes in flight", {
      timeoutMs: 5_000,
      everyMs: 10
    })
  })

  it("refuses to start with a budget smaller than create-batch-call's limit", async () => {
    let error: unknown
    try {
      const started = await TestServer.listen({
        SVC_MAX_BODY_BYTES: String(2 * MiB),
        SVC_MAX_INFLIGHT_BODY_BYTES: String(MiB)
      })
      await started.close()
    } catch (e) {
      error = e
    }
    assert.include(
      String(error),
      "SVC_MAX_INFLIGHT_BODY_BYTES (1048576) must be at least SVC_MAX_BODY_BYTES (2097152): a batch at its limit " +
        "could never be received"
    )
  })
})
