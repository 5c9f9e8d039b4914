// Issue 16, item 7 (body text): invalid UTF-8 in search_query was accepted (decoded to U+FFFD) and a NUL was
// silently stripped from search_query but rejected in other fields. One rule now, on every endpoint: a body is
// valid UTF-8 and no string in it holds a NUL or an unpaired surrogate; a violation is a 400 naming the field.
import { assert, describe, it } from "@effect/vitest"
import * as TestServer from "../support/TestServer.ts"

const RULE = "must not contain a NUL character (\\u0000) or an unpaired surrogate (\\ud800-\\udfff)"

describe("request body text", () => {
  it("refuses NUL and unpaired surrogates anywhere in a JSON body, naming the field; accepts what is well formed", async () => {
    const server = await TestServer.start()
    try {
      const { key } = await server.org()
      const refused: Array<[string, string, string]> = [
        ["/list-contacts", `{"search_query":"a\\u0000b"}`, `search_query ${RULE}`],
        ["/list-contacts", `{"search_query":"\\ud800"}`, `search_query ${RULE}`],
        ["/list-contacts", `{"search_query":"\\uDC00x"}`, `search_query ${RULE}`],
        [
          "/list-contacts",
          `{"filter_criteria":{"custom_fields":[{"key":"k","type":"string","value":"\\u0000"}]}}`,
          `filter_criteria.custom_fields[0].value ${RULE}`
        ],
        ["/list-contacts", `{"a\\u0000":1}`, `a field name in request body ${RULE}`],
        [
          "/create-contact",
          `{"phone_number":"+14155550100","custom_fields":{"x":"\\u0000"}}`,
          `custom_fields.x ${RULE}`
        ],
        [
          "/create-batch-call",
          `{"from_number":"+14155550100","tasks":[{"to_number":"+14155550101"},{"to_number":"+1415\\u00005550102"}]}`,
          `tasks[1].to_number ${RULE}`
        ]
      ]
      for (const [route, raw, message] of refused) {
        const response = await server.request("POST", route, { raw })
        assert.strictEqual(response.status, 400, `${route} ${raw}: ${response.text}`)
        assert.deepStrictEqual(response.json, { status: "error", message }, raw)
      }
      // Well formed: an escaped surrogate pair (an emoji), a literal backslash before "u0000", plain Unicode.
      for (
        const raw of [`{"search_query":"\\ud83d\\ude00"}`, `{"search_query":"\\\\u0000"}`, `{"search_query":"café"}`]
      ) {
        const response = await server.request("POST", "/list-contacts", { raw })
        assert.strictEqual(response.status, 200, `${raw}: ${response.text}`)
      }
      // Invalid UTF-8 bytes: {"search_query":"<0xff>"}
      const bytes = new Uint8Array([
        ...new TextEncoder().encode(`{"search_query":"`),
        0xff,
        ...new TextEncoder().encode(`"}`)
      ])
      const invalid = await server.fetch("http://svc.test/list-contacts", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: bytes
      })
      assert.strictEqual(invalid.status, 400)
      assert.deepStrictEqual(await invalid.json(), { status: "error", message: "request body is not valid UTF-8" })
    } finally {
      await server.close()
    }
  })
})
