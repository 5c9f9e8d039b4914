// The 404 of a path the deprecation schedule names but svc does not serve: whatever the endpoint's
// status on the day (upcoming, deprecated, removed), the message names that status with its date and
// the replacement (issue 16, item 9), never the generic "no endpoint". Dates are pinned here; the
// HTTP test in Errors.integration.test.ts walks every row of the schedule through the real server.
import { assert, describe, it } from "@effect/vitest"
import { notFoundMessage } from "../../src/middleware/ErrorResponses.ts"

const at = (iso: string) => Date.parse(iso)

describe("notFoundMessage", () => {
  it("names the removal date and the replacement of a removed endpoint", () => {
    assert.strictEqual(
      notFoundMessage("GET", "/list-agents", at("2026-11-25T00:00:00Z")),
      "GET /list-agents was removed on 2026-07-31; use POST /v2/list-agents with a channel filter (voice)"
    )
  })

  it("names the deprecation date and the replacement of a deprecated endpoint svc does not serve", () => {
    assert.strictEqual(
      notFoundMessage("POST", "/v2/create-web-call", at("2026-09-30T00:00:00Z")),
      "POST /v2/create-web-call is deprecated since 2026-09-30 and is not served by svc; use POST /v3/create-web-call"
    )
  })

  it("says when an endpoint svc does not serve will be deprecated", () => {
    assert.strictEqual(
      notFoundMessage("POST", "/v2/create-web-call", at("2026-09-29T23:59:59Z")),
      "POST /v2/create-web-call will be deprecated on 2026-09-30 and is not served by svc; use POST /v3/create-web-call"
    )
  })

  it("names the part that is deprecated when the schedule deprecates only some uses", () => {
    const message = notFoundMessage("PATCH", "/v2/update-call/call_1", at("2026-11-25T00:00:00Z"))
    assert.strictEqual(
      message,
      "PATCH /v2/update-call/call_1 is deprecated since 2026-08-31 on ongoing calls (including " +
        "`override_dynamic_variables` and `data_storage_setting` changes) and is not served by svc; " +
        "use PATCH /v2/update-live-call/{call_id} for ongoing calls"
    )
  })

  it("keeps the plain message for a path the schedule does not name", () => {
    assert.strictEqual(
      notFoundMessage("GET", "/no-such-thing", at("2026-11-25T00:00:00Z")),
      "no endpoint GET /no-such-thing; see /openapi.json for the API"
    )
  })
})
