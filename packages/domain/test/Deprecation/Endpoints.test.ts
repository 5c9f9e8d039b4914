import { assert, describe, it } from "@effect/vitest"
import { checkEndpoint, endpointRules, pathSegments } from "../../src/Deprecation/Endpoints.ts"
import type { RuleId } from "../../src/Deprecation/Rule.ts"

const at = (iso: string) => Date.parse(iso)
const LATER = "2030-01-01T00:00:00Z"

interface Case {
  readonly rule: RuleId
  readonly method: string
  readonly path: string
  readonly replacement: string
  /** [instant, expected status] */
  readonly timeline: ReadonlyArray<readonly [string, string]>
}

const removedOn = (date: string, previousDay: string): ReadonlyArray<readonly [string, string]> => [
  [`${previousDay}T23:59:59Z`, "upcoming"],
  [`${date}T00:00:00Z`, "removed"],
  [LATER, "removed"]
]

const deprecatedOn = (date: string, previousDay: string): ReadonlyArray<readonly [string, string]> => [
  [`${previousDay}T23:59:59Z`, "upcoming"],
  [`${date}T00:00:00Z`, "deprecated"],
  [LATER, "deprecated"]
]

const legacyLists: ReadonlyArray<readonly [string, string]> = [
  ["/list-batch-tests", "GET /v2/list-batch-tests"],
  ["/list-conversation-flow-components", "GET /v2/list-conversation-flow-components"],
  ["/list-conversation-flows", "GET /v2/list-conversation-flows"],
  ["/list-phone-numbers", "GET /v2/list-phone-numbers"],
  ["/list-svc-llms", "GET /v2/list-svc-llms"],
  ["/list-retell-llms", "GET /v2/list-svc-llms"],
  ["/list-test-case-definitions", "GET /v2/list-test-case-definitions"],
  ["/list-test-runs/job_123", "GET /v2/list-test-runs/{test_case_batch_job_id}"],
  ["/list-calls", "POST /v3/list-calls"],
  ["/list-chats", "POST /v3/list-chats"]
]

const cases: ReadonlyArray<Case> = [
  // spec row 5
  ...legacyLists.map(([path, replacement]): Case => ({
    rule: "legacy-list-endpoints",
    method: "GET",
    path,
    replacement,
    timeline: removedOn("2026-06-15", "2026-06-14")
  })),
  // spec row 6
  {
    rule: "publish-agent-endpoints",
    method: "POST",
    path: "/publish-agent/ag_1",
    replacement: "POST /publish-agent-version/{agent_id}",
    timeline: removedOn("2026-07-20", "2026-07-19")
  },
  {
    rule: "publish-agent-endpoints",
    method: "POST",
    path: "/publish-chat-agent/ag_1",
    replacement: "POST /publish-agent-version/{agent_id}",
    timeline: removedOn("2026-07-20", "2026-07-19")
  },
  // spec row 7
  {
    rule: "list-agents-v1",
    method: "GET",
    path: "/list-agents",
    replacement: "POST /v2/list-agents with a channel filter (voice)",
    timeline: removedOn("2026-07-31", "2026-07-30")
  },
  {
    rule: "list-agents-v1",
    method: "GET",
    path: "/list-chat-agents",
    replacement: "POST /v2/list-agents with a channel filter (chat)",
    timeline: removedOn("2026-07-31", "2026-07-30")
  },
  // spec row 8
  {
    rule: "update-call-live-fields",
    method: "PATCH",
    path: "/v2/update-call/call_1",
    replacement: "PATCH /v2/update-live-call/{call_id} for ongoing calls",
    timeline: deprecatedOn("2026-08-31", "2026-08-30")
  },
  // spec row 9
  {
    rule: "get-agent-versions",
    method: "GET",
    path: "/get-agent-versions/ag_1",
    replacement: "GET /list-agent-versions/{agent_id}",
    timeline: removedOn("2026-09-15", "2026-09-14")
  },
  {
    rule: "get-agent-versions",
    method: "GET",
    path: "/get-chat-agent-versions/ag_1",
    replacement: "GET /list-agent-versions/{agent_id}",
    timeline: removedOn("2026-09-15", "2026-09-14")
  },
  // spec row 10
  {
    rule: "create-web-call-v2",
    method: "POST",
    path: "/v2/create-web-call",
    replacement: "POST /v3/create-web-call",
    timeline: deprecatedOn("2026-09-30", "2026-09-29")
  }
]

describe("checkEndpoint", () => {
  for (const c of cases) {
    it(`classifies ${c.method} ${c.path} as ${c.rule} before, on and after its date`, () => {
      for (const [instant, status] of c.timeline) {
        const finding = checkEndpoint(c.method, c.path, at(instant))
        assert.strictEqual(finding?.ruleId, c.rule, instant)
        assert.strictEqual(finding?.status, status, instant)
        assert.strictEqual(finding?.replacement, c.replacement)
      }
    })

    it(`ignores the query string, fragment, trailing and doubled slashes and hosts for ${c.path}`, () => {
      for (const variant of [`${c.path}/`, `${c.path}?limit=10&x=/list-agents`, `${c.path}#top`, `/${c.path}//`]) {
        assert.strictEqual(checkEndpoint(c.method, variant, at(LATER))?.ruleId, c.rule, variant)
      }
      assert.strictEqual(checkEndpoint(c.method, `https://api.example.com${c.path}?a=1`, at(LATER))?.ruleId, c.rule)
      assert.strictEqual(checkEndpoint(c.method.toLowerCase(), c.path, at(LATER))?.ruleId, c.rule)
    })
  }

  it("matches every template of the schedule", () => {
    const covered = new Set(cases.map((c) => c.rule))
    for (const { rule } of endpointRules) assert.isTrue(covered.has(rule.id), rule.id)
  })

  it("names the replacement and the removal date in the message", () => {
    const finding = checkEndpoint("GET", "/list-agents", at("2026-08-01T12:00:00Z"))
    assert.strictEqual(finding?.removedOn, "2026-07-31")
    assert.strictEqual(finding?.deprecatedOn, undefined)
    assert.strictEqual(
      finding?.message,
      "GET /list-agents was removed on 2026-07-31; use POST /v2/list-agents with a channel filter (voice)"
    )
    const upcoming = checkEndpoint("GET", "/get-agent-versions/a", at("2026-09-01T00:00:00Z"))
    assert.include(upcoming?.message, "will be removed on 2026-09-15")
  })

  it("gives deprecated endpoints their Deprecation date and no Sunset", () => {
    const finding = checkEndpoint("POST", "/v2/create-web-call", at(LATER))
    assert.strictEqual(finding?.deprecatedOn, "2026-09-30")
    assert.strictEqual(finding?.removedOn, undefined)
  })

  it("says which part of update-call is deprecated", () => {
    const finding = checkEndpoint("PATCH", "/update-call/call_1", at(LATER))
    assert.strictEqual(finding?.ruleId, "update-call-live-fields")
    assert.include(finding?.endpoint.partial, "ongoing calls")
    assert.include(finding?.message, "override_dynamic_variables")
  })

  it("checks HEAD as GET and any method on legacy list paths", () => {
    assert.strictEqual(checkEndpoint("HEAD", "/list-agents", at(LATER))?.ruleId, "list-agents-v1")
    assert.strictEqual(checkEndpoint("POST", "/list-calls", at(LATER))?.ruleId, "legacy-list-endpoints")
  })

  it("returns nothing for paths the schedule does not name", () => {
    const unrelated: ReadonlyArray<readonly [string, string]> = [
      ["POST", "/list-contacts"],
      ["GET", "/v2/list-batch-tests"],
      ["GET", "/get-batch-test/job_1"],
      ["POST", "/v2/list-agents"],
      ["POST", "/list-agents"],
      ["GET", "/publish-agent/ag_1"],
      ["POST", "/publish-agent-version/ag_1"],
      ["POST", "/publish-agent"],
      ["POST", "/publish-agent/ag_1/extra"],
      ["GET", "/list-agent-versions/ag_1"],
      ["GET", "/get-agent-versions"],
      ["POST", "/v3/create-web-call"],
      ["POST", "/create-web-call"],
      ["PATCH", "/v2/update-live-call/call_1"],
      ["GET", "/v2/list-calls"],
      ["POST", "/v3/list-calls"],
      ["GET", "/list-knowledge-bases"],
      ["GET", "/list-voices"],
      ["GET", "/List-Agents"],
      ["GET", "/"],
      ["GET", ""],
      ["GET", "/list-test-runs"]
    ]
    for (const [method, path] of unrelated) {
      assert.strictEqual(checkEndpoint(method, path, at(LATER)), undefined, `${method} ${path}`)
    }
  })

  it("splits paths and URLs into segments", () => {
    assert.deepStrictEqual(pathSegments("https://h.example:8080/v2/x/?q=1"), ["v2", "x"])
    assert.deepStrictEqual(pathSegments("https://h.example"), [])
    assert.deepStrictEqual(pathSegments("/get-agent-versions/a%2Fb"), ["get-agent-versions", "a%2Fb"])
  })
})
