// Issue 27 ("Also seen"): the start-up line said `http://localhost:<port>` whatever `HOST` was. It names the
// address the server listens on (ServerConfig: `HOST`, default all interfaces).
import { assert, describe, it } from "@effect/vitest"
import { listeningOn } from "../../src/runtime/Server.ts"

describe("the start-up line's address", () => {
  it("names HOST when it is one address, IPv6 literals in brackets (RFC 3986, section 3.2.2)", () => {
    assert.strictEqual(listeningOn("127.0.0.1", 8080), "http://127.0.0.1:8080")
    assert.strictEqual(listeningOn("10.1.2.3", 9000), "http://10.1.2.3:9000")
    assert.strictEqual(listeningOn("::1", 8080), "http://[::1]:8080")
    assert.strictEqual(listeningOn("api.internal", 8080), "http://api.internal:8080")
  })

  it("for all interfaces, says so, with the URL that reaches it from this machine", () => {
    assert.strictEqual(listeningOn("0.0.0.0", 8080), "http://localhost:8080 (all interfaces, HOST 0.0.0.0)")
    assert.strictEqual(listeningOn("::", 8080), "http://localhost:8080 (all interfaces, HOST ::)")
  })
})
