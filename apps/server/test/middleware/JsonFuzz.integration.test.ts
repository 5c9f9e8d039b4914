// Issue 27: nested, wide and mixed JSON sent to every route of the API, from a seed (in the test's name; set
// SVC_FUZZ_SEED to replay another). Whatever the body, the answer is never a 5xx, always a status the endpoint lists,
// and an error is the error shape; and whatever a write accepts is readable by every read endpoint that shows it
// (get-call, /v3/list-calls, get-batch-call, get-contact, list-contacts): the write path must never accept what the
// read path cannot answer (a 4,000-deep metadata once made list-calls a 500 for its org).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Api } from "@svc/api/Api.ts"
import { Effect } from "effect"
import { HttpApi } from "effect/http-api"
import { SqlClient } from "effect/sql"
import * as TestServer from "../support/TestServer.ts"

const SEED = Number(process.env["SVC_FUZZ_SEED"] ?? 27_2027)
const REQUESTS = 800

const FROM = "+14155550100"
const CALL = "call_fuzz_base"

let server: TestServer.TestServer
let org: { orgId: string; key: string }
let contactId: string

beforeAll(async () => {
  server = await TestServer.start()
  org = await server.org()
  await server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp) VALUES (${org.orgId}, ${FROM}, 0)`
    yield* sql`INSERT INTO calls (org_id, call_id, from_number, to_number, call_status, recorded_timestamp)
      VALUES (${org.orgId}, ${CALL}, ${FROM}, '+14155550101', 'ended', 1)`
  }))
  const contact = await server.request("POST", "/create-contact", { body: { phone_number: "+14155550111" } })
  contactId = (contact.json as { contact_id: string }).contact_id
})
afterAll(() => server.close())

/** mulberry32: small, fast, deterministic. */
const prng = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)]!
  return { next, int, pick, chance: (p: number) => next() < p }
}
type Random = ReturnType<typeof prng>

// Numbers as literals (JSON.parse would round the large ones before the server saw them): inside and at the edges of
// ±(2^53 - 1), and past it. No -0: jsonb keeps it, but the read-back comparison below is not the place to argue it.
const NUMBERS = [
  "0",
  "1",
  "-7",
  "1.5",
  "0.1",
  "1e-7",
  "123456.789",
  "9007199254740991",
  "-9007199254740991",
  "9007199254740992",
  "12345678901234567890",
  "1e300",
  "1e400"
]
const STRINGS = [
  "",
  "a",
  "crm_42",
  "é",
  "😀",
  "中文",
  "\\\"",
  "\\\\",
  "\\n",
  "\\u00e9",
  "\\ud83d\\ude00",
  "+14155550123"
]
const KEYS = ["a", "b", "id", "crm", "tags", "x y", "é", "10", "2", "nested"]

const scalar = (r: Random): string =>
  r.pick([
    () => "null",
    () => (r.chance(0.5) ? "true" : "false"),
    () => r.pick(NUMBERS),
    () => `"${r.pick(STRINGS)}"`,
    // now and then a string the text rule refuses
    () => (r.chance(0.05) ? "\"a\\u0000b\"" : `"${r.pick(STRINGS)}"`)
  ])()

/** `levels` objects and arrays around a scalar. */
const nested = (r: Random, levels: number): string => {
  let open = ""
  let close = ""
  for (let i = 0; i < levels; i++) {
    if (r.chance(0.5)) {
      open += `{"${r.pick(KEYS)}":`
      close = "}" + close
    } else {
      open += "["
      close = "]" + close
    }
  }
  return open + scalar(r) + close
}

/** An object or array of many small members. */
const wide = (r: Random, width: number): string =>
  r.chance(0.5)
    ? `{${Array.from({ length: width }, (_, i) => `"k${i}":${scalar(r)}`).join(",")}}`
    : `[${Array.from({ length: width }, () => scalar(r)).join(",")}]`

/** Depth and width together, bounded by a budget of members. */
const mixed = (r: Random, depth: number, budget: { left: number }): string => {
  if (depth <= 0 || budget.left <= 0 || r.chance(0.25)) return scalar(r)
  const n = 1 + r.int(4)
  budget.left -= n
  const members = Array.from({ length: n }, () => mixed(r, depth - 1 - (r.chance(0.8) ? 0 : 1), budget))
  return r.chance(0.5)
    ? `{${members.map((m, i) => `"${r.pick(KEYS)}${i}":${m}`).join(",")}}`
    : `[${members.join(",")}]`
}

/** A JSON value: nested (often around the limit, sometimes far past it), wide, mixed, or plain. */
const value = (r: Random): string => {
  switch (r.int(6)) {
    case 0:
    case 5:
      return nested(r, r.pick([1, 5, 20, 58, 60, 61, 62, 63, 64, 65, 66, 70, 500, 5_000]))
    case 1:
      return wide(r, r.pick([10, 200, 1_500]))
    case 2:
      return mixed(r, r.pick([4, 30, 62, 64, 80]), { left: r.pick([20, 300]) })
    case 3:
      return `{"${r.pick(KEYS)}":${nested(r, r.int(8))},"w":${wide(r, 20)}}`
    default:
      return `{"crm_id":"${r.pick(STRINGS)}","n":${r.pick(NUMBERS)}}`
  }
}

const OBJECT = (r: Random) => {
  const v = value(r)
  return v.startsWith("{") ? v : `{"v":${v}}`
}

interface Route {
  readonly method: string
  /** The contract's path, to check that every endpoint is covered. */
  readonly contract: string
  readonly statuses: ReadonlyArray<number>
  readonly request: (r: Random, n: number) => { readonly path: string; readonly raw?: string }
}

const phone = (n: number) => `+1212555${String(n % 10_000).padStart(4, "0")}`

const routes: ReadonlyArray<Route> = [
  {
    method: "POST",
    contract: "/list-contacts",
    statuses: [200, 400, 429],
    request: (r) => ({
      path: "/list-contacts",
      raw: r.pick([
        () => value(r),
        () => `{"limit":${r.pick(NUMBERS)}}`,
        () => `{"filter_criteria":{"custom_fields":[{"key":"a","type":"string","op":"eq","value":${scalar(r)}}]}}`,
        () => `{"search_query":${scalar(r)},"extra":${value(r)}}`
      ])()
    })
  },
  {
    method: "POST",
    contract: "/create-contact",
    statuses: [201, 400, 429],
    request: (r, n) => ({
      path: "/create-contact",
      raw: r.chance(0.6)
        ? `{"phone_number":"${phone(n)}","custom_fields":{"crm":${scalar(r)},"score":${r.pick(NUMBERS)}}}`
        : `{"phone_number":"${phone(n)}","custom_fields":${OBJECT(r)}}`
    })
  },
  {
    method: "GET",
    contract: "/get-contact/:contact_id",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  },
  {
    method: "PATCH",
    contract: "/update-contact/:contact_id",
    statuses: [200, 400, 404, 429],
    request: (r) => ({
      path: `/update-contact/${contactId}`,
      raw: r.chance(0.5) ? `{"custom_fields":{"crm":${scalar(r)}}}` : `{"custom_fields":${OBJECT(r)}}`
    })
  },
  {
    method: "DELETE",
    contract: "/delete-contact/:contact_id",
    statuses: [204, 400, 404, 429],
    request: (r) => ({ path: `/delete-contact/no_such_contact`, raw: value(r) })
  },
  {
    method: "POST",
    contract: "/backfill-contact-analysis-data",
    statuses: [200, 400, 429],
    request: (r) => ({ path: "/backfill-contact-analysis-data", raw: r.chance(0.3) ? "{}" : value(r) })
  },
  {
    method: "GET",
    contract: "/get-backfill-contact-job-status",
    statuses: [200, 400, 429],
    request: () => ({ path: "" })
  },
  {
    method: "POST",
    contract: "/create-batch-call",
    statuses: [200, 400, 404],
    request: (r, n) => {
      const tasks = Array.from({ length: r.pick([1, 1, 3, 300]) }, (_, i) =>
        r.chance(0.7)
          ? `{"to_number":"${phone(n * 1000 + i)}","metadata":${OBJECT(r)}}`
          : `{"to_number":"${phone(n * 1000 + i)}","svc_llm_dynamic_variables":{"name":${scalar(r)}},` +
            `"metadata":{"crm":${scalar(r)}}}`)
      return {
        path: "/create-batch-call",
        raw: r.chance(0.9) ? `{"from_number":"${FROM}","tasks":[${tasks.join(",")}]}` : value(r)
      }
    }
  },
  {
    method: "GET",
    contract: "/get-batch-test/:test_case_batch_job_id",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  },
  { method: "GET", contract: "/v2/list-batch-tests", statuses: [200, 400, 429], request: () => ({ path: "" }) },
  {
    method: "GET",
    contract: "/get-batch-call/:batch_call_id",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  },
  {
    method: "POST",
    contract: "/cancel-batch-call/:batch_call_id",
    statuses: [200, 400, 404, 429],
    request: (r) => ({ path: "/cancel-batch-call/no_such_batch", raw: value(r) })
  },
  {
    method: "POST",
    contract: "/pause-batch-call/:batch_call_id",
    statuses: [200, 400, 404, 409, 429],
    request: (r) => ({ path: "/pause-batch-call/no_such_batch", raw: value(r) })
  },
  {
    method: "POST",
    contract: "/resume-batch-call/:batch_call_id",
    statuses: [200, 400, 404, 409, 429],
    request: (r) => ({ path: "/resume-batch-call/no_such_batch", raw: value(r) })
  },
  { method: "GET", contract: "/v2/get-call/:call_id", statuses: [200, 400, 404, 429], request: () => ({ path: "" }) },
  {
    method: "POST",
    contract: "/v3/list-calls",
    statuses: [200, 400, 429],
    request: (r) => ({
      path: "/v3/list-calls",
      raw: r.pick([
        () => value(r),
        () => `{"filter_criteria":{"metadata":[{"key":"crm","type":"string","op":"eq","value":${scalar(r)}}]}}`,
        () => `{"limit":${r.pick(NUMBERS)},"include_total":true}`
      ])()
    })
  },
  {
    method: "PATCH",
    contract: "/v2/update-call/:call_id",
    statuses: [200, 400, 404, 429],
    request: (r) => ({
      path: `/v2/update-call/${CALL}`,
      raw: r.chance(0.8) ? `{"metadata":${value(r)}}` : value(r)
    })
  },
  {
    method: "DELETE",
    contract: "/v2/delete-call/:call_id",
    statuses: [204, 400, 404, 429],
    request: (r) => ({ path: "/v2/delete-call/no_such_call", raw: value(r) })
  },
  {
    method: "GET",
    contract: "/get-contact-by-phone/:phone_number",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  },
  {
    method: "GET",
    contract: "/list-contact-conversations/:contact_id",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  },
  // batch tests that run (issue 32)
  {
    method: "POST",
    contract: "/create-test-case-definition",
    statuses: [200, 400, 429],
    request: (r) => ({ path: "/create-test-case-definition", raw: value(r) })
  },
  {
    method: "GET",
    contract: "/get-test-case-definition/:test_case_definition_id",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  },
  {
    method: "PUT",
    contract: "/update-test-case-definition/:test_case_definition_id",
    statuses: [200, 400, 404, 429],
    request: (r) => ({ path: "/update-test-case-definition/no_such_definition", raw: value(r) })
  },
  {
    method: "DELETE",
    contract: "/delete-test-case-definition/:test_case_definition_id",
    statuses: [204, 400, 404, 429],
    request: (r) => ({ path: "/delete-test-case-definition/no_such_definition", raw: value(r) })
  },
  {
    method: "GET",
    contract: "/v2/list-test-case-definitions",
    statuses: [200, 400, 429],
    request: () => ({ path: "" })
  },
  {
    method: "POST",
    contract: "/create-batch-test",
    statuses: [200, 400, 404, 429],
    request: (r) => ({ path: "/create-batch-test", raw: value(r) })
  },
  {
    method: "GET",
    contract: "/v2/list-test-runs/:test_case_batch_job_id",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  },
  {
    method: "GET",
    contract: "/get-test-run/:test_case_job_id",
    statuses: [200, 400, 404, 429],
    request: () => ({ path: "" })
  }
]

// list-batch-calls and list-batch-call-tasks (issue 31 item 3) are fuzzed in a loop of their own after the main one,
// so that the main loop's seeded sequence of requests (and the writes it reads back) stays what it was
const batchListRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    contract: "/list-batch-calls",
    statuses: [200, 400, 429],
    request: (r) => ({
      path: "/list-batch-calls",
      raw: r.pick([
        () => value(r),
        () => `{"limit":${r.pick(NUMBERS)}}`,
        () => `{"filter_criteria":{"created_timestamp":{"type":"number","op":"ge","value":${scalar(r)}}}}`
      ])()
    })
  },
  {
    method: "POST",
    contract: "/list-batch-call-tasks/:batch_call_id",
    statuses: [200, 400, 404, 429],
    request: (r) => ({ path: "/list-batch-call-tasks/no_such_batch", raw: value(r) })
  }
]
const BATCH_LIST_REQUESTS = 200

// the suppression list (issue 31 item 5, decision 0550), in a loop of its own for the same reason
const suppressionRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    contract: "/create-suppression",
    statuses: [200, 201, 400, 429],
    request: (r) => ({
      path: "/create-suppression",
      raw: r.pick([
        () => value(r),
        () =>
          `{"phone_number":"+1415555${String(r.int(10_000)).padStart(4, "0")}","reason":${
            r.pick(["null", "\"asked\"", "\"\"", value(r)])
          }}`,
        () => `{"phone_number":"+14155550199","source":${value(r)}}`
      ])()
    })
  },
  {
    method: "POST",
    contract: "/list-suppressions",
    statuses: [200, 400, 429],
    request: (r) => ({
      path: "/list-suppressions",
      raw: r.pick([() => value(r), () => `{"limit":${r.pick(NUMBERS)}}`, () => `{"search":${value(r)}}`])()
    })
  },
  {
    method: "DELETE",
    contract: "/delete-suppression/:phone_number",
    statuses: [204, 400, 404, 429],
    request: (r) => ({
      path: `/delete-suppression/${
        encodeURIComponent(r.pick(["+14155550199", "+1415555", "4155550199", value(r).slice(0, 40).toWellFormed()]))
      }`
    })
  }
]
const SUPPRESSION_REQUESTS = 200

// retry-batch-call (issue 31 item 2) in a loop of its own after the others, so their seeded sequences stay what they
// were; against a batch of the org (path "{batch}") and an id that does not exist
const retryRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    contract: "/retry-batch-call/:batch_call_id",
    statuses: [200, 400, 404, 409, 429],
    request: (r) => ({
      path: r.chance(0.8) ? "/retry-batch-call/{batch}" : "/retry-batch-call/no_such_batch",
      raw: r.pick([
        () => value(r),
        () => `{"outcomes":${value(r)}}`,
        () => `{"outcomes":[${r.pick(["\"busy\"", "\"no_answer\"", "\"failed\"", "\"voicemail\"", scalar(r)])}]}`,
        () => "{}"
      ])()
    })
  }
]
const RETRY_REQUESTS = 100

// list-webhook-deliveries (issue 33, an svc extension) in a loop of its own after the others, so their seeded sequences
// stay what they were
const deliveryRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    contract: "/list-webhook-deliveries",
    statuses: [200, 400, 429],
    request: (r) => ({
      path: "/list-webhook-deliveries",
      raw: r.pick([
        () => value(r),
        () => `{"limit":${r.pick(NUMBERS)}}`,
        () => `{"filter_criteria":{"call_id":{"type":"enum","value":[${scalar(r)}]}}}`,
        () => `{"filter_criteria":{"state":${value(r)}}}`
      ])()
    })
  }
]
const DELIVERY_REQUESTS = 100

/** A GET's target: its path with ids, and a query of nested-looking names and values (none of them declared). */
const getPath = (r: Random, contract: string): string => {
  const path = contract
    .replace(":contact_id", contactId)
    .replace(":phone_number", "+14155550111")
    .replace(":call_id", CALL)
    .replace(/:[a-z_]+/, "x_1")
  if (r.chance(0.5)) {
    return contract === "/v2/list-batch-tests" ? `${path}?type=svc-llm&llm_id=llm_1` : path
  }
  const name = r.pick(["a[b][c]", "metadata[x][y][z]", "limit", "filter_criteria"])
  return `${path}?${encodeURIComponent(name)}=${encodeURIComponent(value(r).slice(0, 200).toWellFormed())}`
}

const expectOk = async (method: string, path: string, body?: unknown) => {
  const response = await server.request(method, path, body === undefined ? {} : { body })
  assert.strictEqual(response.status, 200, `read back ${method} ${path}: ${response.text.slice(0, 300)}`)
  return response.json as Record<string, unknown>
}

describe("nested, wide and mixed JSON on every route", () => {
  it(`never answers 5xx, and what a write accepts every read endpoint answers (seed ${SEED})`, async () => {
    const covered = new Set(
      [...routes, ...batchListRoutes, ...suppressionRoutes, ...retryRoutes, ...deliveryRoutes].map((route) =>
        `${route.method} ${route.contract}`
      )
    )
    HttpApi.reflect(Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        assert.isTrue(covered.has(`${endpoint.method} ${endpoint.path}`), `${endpoint.method} ${endpoint.path}`)
      }
    })

    const r = prng(SEED)
    const seen = new Map<number, number>()
    const reasons = { depth: 0, number: 0 }
    let readBacks = 0
    for (let n = 0; n < REQUESTS; n++) {
      const route = r.pick(routes)
      const made = route.request(r, n)
      const path = made.path === "" ? getPath(r, route.contract) : made.path
      const raw = made.raw
      const response = await server.request(route.method, path, raw === undefined ? {} : { raw })
      const context = `seed ${SEED} #${n} ${route.method} ${path} ${(raw ?? "").slice(0, 160)} -> ${response.status} ` +
        response.text.slice(0, 300)
      seen.set(response.status, (seen.get(response.status) ?? 0) + 1)
      assert.isBelow(response.status, 500, context)
      assert.include(route.statuses, response.status, context)
      if (response.status >= 400) {
        assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"], context)
        const message = (response.json as { message: string }).message
        if (message.includes("nested too deep")) reasons.depth++
        if (message.includes("is a number beyond")) reasons.number++
        continue
      }
      // accepted: every read endpoint that shows it answers, with what was sent
      if (route.contract === "/v2/update-call/:call_id") {
        const sent = (JSON.parse(raw!) as { metadata?: unknown }).metadata
        const got = await expectOk("GET", `/v2/get-call/${CALL}`)
        // a JSON null clears the metadata (the call then has none, as before any was set)
        if (sent === null) assert.notProperty(got, "metadata", context)
        else if (sent !== undefined) assert.deepStrictEqual(got["metadata"], sent, context)
        const listed = await expectOk("POST", "/v3/list-calls", {
          filter_criteria: { call_id: { type: "string", op: "eq", value: CALL } }
        })
        assert.deepStrictEqual(listed["items"], [got], context)
        readBacks++
      } else if (route.contract === "/create-batch-call") {
        const batchId = (response.json as { batch_call_id: string }).batch_call_id
        await expectOk("GET", `/get-batch-call/${batchId}`)
        await expectOk("POST", "/list-batch-calls", {})
        // the task's metadata as it was sent (list-batch-call-tasks, issue 31 item 3)
        const sentTasks = (JSON.parse(raw!) as { tasks: Array<{ metadata?: unknown }> }).tasks
        const page = await expectOk("POST", `/list-batch-call-tasks/${batchId}`, { limit: 1 })
        const listedTask = (page["items"] as Array<{ metadata?: unknown }>)[0]!
        assert.deepStrictEqual(listedTask.metadata, sentTasks[0]!.metadata, context)
        // its tasks become calls as the scheduler's claim makes them (migration 0024: the task's stored values)
        await server.run(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`
            INSERT INTO calls (org_id, call_id, task_id, batch_call_id, from_number, to_number, call_status, metadata,
              dynamic_variables, custom_sip_headers, recorded_timestamp)
            SELECT org_id, 'call_fuzz_' || task_id, task_id, batch_call_id, ${FROM}, to_number, 'ended', metadata,
              dynamic_variables, custom_sip_headers, 2
            FROM batch_call_tasks WHERE batch_call_id = ${batchId}`
        }))
        const tasks = (JSON.parse(raw!) as { tasks: Array<{ metadata?: unknown }> }).tasks
        const listed = await expectOk("POST", "/v3/list-calls", {
          limit: 1000,
          filter_criteria: { batch_call_id: { type: "string", op: "eq", value: batchId } }
        })
        const items = listed["items"] as Array<{ call_id: string; to_number: string; metadata?: unknown }>
        assert.strictEqual(items.length, tasks.length, context)
        const first = items.find((item) => item.to_number === phone(n * 1000))!
        assert.deepStrictEqual(first.metadata, tasks[0]!.metadata, context)
        const got = await expectOk("GET", `/v2/get-call/${first.call_id}`)
        assert.deepStrictEqual(got["metadata"], tasks[0]!.metadata, context)
        readBacks++
      } else if (route.contract === "/create-contact" || route.contract === "/update-contact/:contact_id") {
        const id = (response.json as { contact_id: string }).contact_id
        const got = await expectOk("GET", `/get-contact/${id}`)
        assert.deepStrictEqual(got, response.json as Record<string, unknown>, context)
        await expectOk("POST", "/list-contacts", {})
        readBacks++
      } else if (route.contract === "/backfill-contact-analysis-data") {
        await expectOk("GET", "/get-backfill-contact-job-status")
      }
    }
    const lists = prng(SEED + 1)
    for (let n = 0; n < BATCH_LIST_REQUESTS; n++) {
      const route = lists.pick(batchListRoutes)
      const made = route.request(lists, n)
      const response = await server.request(route.method, made.path, made.raw === undefined ? {} : { raw: made.raw })
      const context = `seed ${SEED + 1} #${n} ${route.method} ${made.path} ${
        (made.raw ?? "").slice(0, 160)
      } -> ${response.status} ${response.text.slice(0, 300)}`
      assert.include(route.statuses, response.status, context)
      if (response.status >= 400) {
        assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"], context)
      }
    }
    const suppressions = prng(SEED + 2)
    let suppressed = 0
    for (let n = 0; n < SUPPRESSION_REQUESTS; n++) {
      const route = suppressions.pick(suppressionRoutes)
      const made = route.request(suppressions, n)
      const response = await server.request(route.method, made.path, made.raw === undefined ? {} : { raw: made.raw })
      const context = `seed ${SEED + 2} #${n} ${route.method} ${made.path} ${
        (made.raw ?? "").slice(0, 160)
      } -> ${response.status} ${response.text.slice(0, 300)}`
      assert.include(route.statuses, response.status, context)
      if (response.status >= 400) {
        assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"], context)
      }
      if (response.status === 201) {
        // what create-suppression accepted, list-suppressions answers
        const number = (response.json as { phone_number: string }).phone_number
        const listed = await expectOk("POST", "/list-suppressions", { search: number })
        assert.deepStrictEqual((listed["items"] as Array<unknown>)[0], response.json, context)
        suppressed++
      }
    }
    const retries = prng(SEED + 3)
    const target = await server.request("POST", "/create-batch-call", {
      body: { from_number: FROM, tasks: [{ to_number: phone(9_999) }] }
    })
    assert.strictEqual(target.status, 200, target.text)
    const targetId = (target.json as { batch_call_id: string }).batch_call_id
    let retried = 0
    for (let n = 0; n < RETRY_REQUESTS; n++) {
      const route = retries.pick(retryRoutes)
      const made = route.request(retries, n)
      const path = made.path.replace("{batch}", targetId)
      const response = await server.request(route.method, path, made.raw === undefined ? {} : { raw: made.raw })
      const context = `seed ${SEED + 3} #${n} ${route.method} ${path} ${
        (made.raw ?? "").slice(0, 160)
      } -> ${response.status} ${response.text.slice(0, 300)}`
      assert.include(route.statuses, response.status, context)
      if (response.status >= 400) {
        assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"], context)
      } else {
        // what it answers about the batch, get-batch-call answers too (but the times computed from the clock)
        const got = await expectOk("GET", `/get-batch-call/${targetId}`)
        const batch = (response.json as { batch: Record<string, unknown> }).batch
        for (const key of ["batch_call_id", "status", "total_task_count", "tasks"]) {
          assert.deepStrictEqual(batch[key], got[key], `${key}: ${context}`)
        }
        retried++
      }
    }
    assert.isAbove(retried, 5, `retries accepted and read back: ${retried}`)
    const deliveries = prng(SEED + 4)
    for (let n = 0; n < DELIVERY_REQUESTS; n++) {
      const route = deliveries.pick(deliveryRoutes)
      const made = route.request(deliveries, n)
      const response = await server.request(route.method, made.path, made.raw === undefined ? {} : { raw: made.raw })
      const context = `seed ${SEED + 4} #${n} ${route.method} ${made.path} ${
        (made.raw ?? "").slice(0, 160)
      } -> ${response.status} ${response.text.slice(0, 300)}`
      assert.include(route.statuses, response.status, context)
      if (response.status >= 400) {
        assert.deepStrictEqual(Object.keys(response.json as object).sort(), ["message", "status"], context)
      }
    }
    // whatever was accepted, the org's lists still answer
    await expectOk("POST", "/list-suppressions", { limit: 1000 })
    assert.isAbove(suppressed, 10, `suppressions created and read back: ${suppressed}`)
    await expectOk("POST", "/v3/list-calls", { limit: 1000, include_total: true })
    await expectOk("POST", "/list-contacts", { limit: 1000 })
    // the generator reached every side: refusals by each rule, and writes accepted and read back
    assert.isAbove(seen.get(400) ?? 0, 100, JSON.stringify(Object.fromEntries(seen)))
    assert.isAbove(reasons.depth, 15, JSON.stringify(reasons))
    assert.isAbove(reasons.number, 15, JSON.stringify(reasons))
    assert.isAbove(readBacks, 40, `read backs: ${readBacks}`)
  }, 600_000)
})
