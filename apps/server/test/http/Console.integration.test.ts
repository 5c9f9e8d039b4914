// GET /console (issue 33, decision 0800): the console's page and bundle are served by svc-server without an API key,
// from files built from the repository, with a Content-Security-Policy that keeps the page to its own origin (no CDN,
// no network elsewhere at run time).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as TestServer from "../support/TestServer.ts"

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start()
})

afterAll(() => server.close())

describe("/console", () => {
  it("serves the page, which loads only its own script and style, with no API key", async () => {
    const page = await server.request("GET", "/console", { key: null })
    assert.strictEqual(page.status, 200, page.text)
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/)
    assert.include(page.text, "/console/console.js")
    assert.include(page.text, "/console/console.css")
    assert.notMatch(page.text, /https?:\/\//, "the page names no other origin")
    const csp = page.headers.get("content-security-policy") ?? ""
    assert.include(csp, "script-src 'self'")
    assert.include(csp, "connect-src 'self'")
    assert.include(csp, "default-src 'none'")
    assert.strictEqual(page.headers.get("referrer-policy"), "no-referrer")
  })

  it("serves the bundle and the styles with their content types", async () => {
    const script = await server.request("GET", "/console/console.js", { key: null })
    assert.strictEqual(script.status, 200)
    assert.match(script.headers.get("content-type") ?? "", /^text\/javascript/)
    assert.isAbove(script.text.length, 10_000)
    const style = await server.request("GET", "/console/console.css", { key: null })
    assert.strictEqual(style.status, 200)
    assert.match(style.headers.get("content-type") ?? "", /^text\/css/)
  })

  it("serves no other file under /console", async () => {
    const other = await server.request("GET", "/console/console.inputs.json", { key: null })
    assert.strictEqual(other.status, 404)
  })
})
