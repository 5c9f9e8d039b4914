// Issue 16, item 3 (per-endpoint limits): one 256 MiB limit for every endpoint let a 200 MB body to
// list-contacts raise the server's RSS by ~750 MB. Each endpoint now takes what it can legitimately
// carry; a larger body is a 400 naming the endpoint's limit, whether its length is declared or it
// arrives in chunks.
import { assert, describe, it } from "@effect/vitest"
import * as TestServer from "./support/TestServer.ts"

const SMALL = 64 * 1024
const CONTACT = 1024 * 1024

/** A JSON object of exactly `bytes` bytes: `{"pad":"xxx…"}`. */
const jsonOf = (bytes: number) => `{"pad":"${"x".repeat(bytes - 10)}"}`

describe("request body limits per endpoint", () => {
  it("small endpoints refuse a body over 64 KiB, declared or chunked, and accept one at the limit", async () => {
    const server = await TestServer.start()
    try {
      const { key } = await server.org()
      const over = await server.request("POST", "/list-contacts", { raw: jsonOf(SMALL + 1) })
      assert.strictEqual(over.status, 400)
      assert.deepStrictEqual(over.json, {
        status: "error",
        message: `request body is larger than /list-contacts accepts (${SMALL} bytes, SVC_MAX_SMALL_BODY_BYTES)`
      })
      // At the limit the size passes; the unknown field is what the endpoint then refuses or ignores.
      const at = await server.request("POST", "/list-contacts", { raw: jsonOf(SMALL) })
      assert.notInclude(at.text, "larger than")

      // Chunked: no Content-Length; 200 chunks of 1 KiB.
      const chunk = new TextEncoder().encode("x".repeat(1024))
      let sent = 0
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("{\"pad\":\""))
        },
        pull(controller) {
          if (sent++ < 200) controller.enqueue(chunk)
          else {
            controller.enqueue(new TextEncoder().encode("\"}"))
            controller.close()
          }
        }
      })
      const chunked = await server.fetch("http://svc.test/backfill-contact-analysis-data", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: stream,
        duplex: "half"
      } as RequestInit)
      assert.strictEqual(chunked.status, 400)
      assert.include(await chunked.text(), "larger than /backfill-contact-analysis-data accepts")
      assert.isBelow(sent, 200, "refused while the chunks arrived, not after buffering them all")
    } finally {
      await server.close()
    }
  })

  it("contacts take up to 1 MiB; create-batch-call keeps SVC_MAX_BODY_BYTES", async () => {
    const server = await TestServer.start({ SVC_MAX_BODY_BYTES: String(200 * 1024) })
    try {
      await server.org()
      const contact = await server.request("POST", "/create-contact", { raw: jsonOf(CONTACT + 1) })
      assert.deepStrictEqual(contact.json, {
        status: "error",
        message: `request body is larger than /create-contact accepts (${CONTACT} bytes, SVC_MAX_CONTACT_BODY_BYTES)`
      })
      const update = await server.request("PATCH", "/update-contact/contact_x", { raw: jsonOf(CONTACT + 1) })
      assert.include((update.json as { message: string }).message, "SVC_MAX_CONTACT_BODY_BYTES")
      // A contact body over the small limit but under its own is not refused for its size.
      const big = await server.request("POST", "/create-contact", { raw: jsonOf(SMALL * 4) })
      assert.notInclude(big.text, "larger than")

      const batch = await server.request("POST", "/create-batch-call", { raw: jsonOf(200 * 1024 + 1) })
      assert.deepStrictEqual(batch.json, {
        status: "error",
        message: `request body is larger than /create-batch-call accepts (${200 * 1024} bytes, SVC_MAX_BODY_BYTES)`
      })
      const fits = await server.request("POST", "/create-batch-call", { raw: jsonOf(100 * 1024) })
      assert.notInclude(fits.text, "larger than", "a batch body over the small limit is not refused for its size")
    } finally {
      await server.close()
    }
  })

  it("large bodies share a per-process budget: one that finds no room within the wait is a 503 with Retry-After", async () => {
    const server = await TestServer.start({
      SVC_MAX_INFLIGHT_BODY_BYTES: String(150 * 1024),
      SVC_BODY_BUDGET_WAIT_MS: "300"
    })
    try {
      const { key } = await server.org()
      // A create-batch-call whose body is still arriving (chunked, no length): it holds the whole budget.
      let finish: () => void = () => {}
      const finished = new Promise<void>((resolve) => (finish = resolve))
      let reading: () => void = () => {}
      const read = new Promise<void>((resolve) => (reading = resolve))
      const held = server.fetch("http://svc.test/create-batch-call", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(`{"pad":"`))
          },
          async pull(controller) {
            // the server reads the body only after its budget was granted
            reading()
            await finished
            controller.enqueue(new TextEncoder().encode(`"}`))
            controller.close()
          }
        }),
        duplex: "half"
      } as RequestInit)
      await read
      const refused = await server.request("POST", "/create-batch-call", { raw: jsonOf(100 * 1024) })
      assert.strictEqual(refused.status, 503, refused.text)
      assert.strictEqual(refused.headers.get("retry-after"), "5")
      assert.deepStrictEqual(refused.json, {
        status: "error",
        message: "the server is busy with other large requests (SVC_MAX_INFLIGHT_BODY_BYTES); retry in 5 s"
      })
      // Small bodies do not wait on the budget.
      assert.strictEqual((await server.request("POST", "/list-contacts", { body: {} })).status, 200)
      finish()
      await (await held).text()
      // The budget is free again once the first request has its answer.
      const after = await server.request("POST", "/create-batch-call", { raw: jsonOf(100 * 1024) })
      assert.notStrictEqual(after.status, 503, after.text)
    } finally {
      await server.close()
    }
  })
})
