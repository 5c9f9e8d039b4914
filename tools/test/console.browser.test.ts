// The svc console (issue 33, "Done when") in a real headless Chromium (Debian's `chromium`, driven by playwright-core),
// against real svc-server and svc-scheduler processes on a seeded database with the simulated carrier:
// - a batch's progress moves on its page while the scheduler dials it;
// - a number held by legal hours shows the rule holding it and its opening time, which the test works out itself from
//   the rule it wrote (a Florida row of the org's calling policy that is closed now: decision 0628);
// - a failed webhook delivery (the receiver answers 500) shows its attempts, on the call page and the webhooks page;
// - a cancel from the batch page takes effect (the API then answers the batch cancelled, nothing pending);
// - a wrong key returns to the key prompt with the API's message; a 429 is waited out and said;
// - contacts search and a contact's conversations; a batch test's verdicts and transcript;
// - axe-core finds no serious or critical violation on any page, at laptop and phone width.
// Screenshots of each page at both widths go to docs/console/ when SVC_CONSOLE_SCREENSHOTS is set (README, quick start).
import { assert, describe, it } from "@effect/vitest"
import { referenceServer } from "@svc/agent-test/test-support/Servers.ts"
import { eventually } from "@svc/runtime/test-support/Waiting.ts"
import { Effect, Exit, Scope } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { type Browser, chromium, type Locator, type Page } from "playwright-core"
import { database, startScheduler, startServer } from "./support/BatchTestProcesses.ts"

const CHROMIUM = process.env["SVC_CHROMIUM"] ?? "/usr/bin/chromium"
const SHOTS = process.env["SVC_CONSOLE_SCREENSHOTS"] === undefined
  ? undefined
  : path.resolve(import.meta.dirname, "..", "..", "docs", "console")
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

const LAPTOP = { width: 1366, height: 860 }
const PHONE = { width: 390, height: 844 }
const DIALLED_TASKS = 3000
const WAIT = { timeout: 60_000 }

type Json = Record<string, unknown>

interface Env {
  readonly base: string
  readonly key: string
  readonly dialling: string
  readonly held: string
  readonly testJob: string
  readonly hoursStart: number
  readonly webhookHits: () => number
  readonly output: () => string
}

let env: Env
let browser: Browser
const scope = Scope.makeUnsafe()

const api = async (method: string, route: string, body?: unknown): Promise<Json> => {
  const response = await fetch(`${env.base}${route}`, {
    method,
    headers: { authorization: `Bearer ${env.key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  assert.isTrue(response.ok, `${method} ${route}: ${response.status} ${text}`)
  return text === "" ? {} : JSON.parse(text) as Json
}

/** Minutes after local midnight in New York at `at`. */
const newYorkMinute = (at: number) => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: "America/New_York",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  }).formatToParts(new Date(at))
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value)
  return part("hour") * 60 + part("minute")
}

/**
 * The first whole minute at or after `from` whose New York wall clock is `startMinute`: when a rule open every day from
 * `startMinute`, read in America/New_York, next opens (minute by minute: an oracle, not the product's arithmetic).
 */
const nextNewYorkOpening = (from: number, startMinute: number) => {
  let t = Math.ceil(from / 60_000) * 60_000
  for (let i = 0; i < 3 * 24 * 60; i++, t += 60_000) if (newYorkMinute(t) === startMinute) return t
  throw new Error("no opening within three days")
}

/** `npm run admin -- <args>` on the test's database, as an operator sets an org up (docs/operations.md). */
const admin = (databaseUrl: string, args: ReadonlyArray<string>) =>
  Effect.callback<string>((resume) => {
    execFile(
      process.execPath,
      [path.resolve(import.meta.dirname, "..", "..", "apps", "server", "src", "admin.ts"), ...args],
      { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "Warn" }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resume(
          error === null
            ? Effect.succeed(stdout)
            : Effect.die(new Error(`admin ${args[0]} failed: ${stderr || error.message}`))
        )
    )
  })

const axeCheck = async (page: Page, what: string) => {
  // evaluated through the DevTools protocol: the page's Content-Security-Policy (script-src 'self') would refuse a
  // script tag, as it should
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.evaluate(AXE)
  const violations = await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) =>
    r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id + " (" + v.impact + "): " + v.help + " at " + v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")))`)
  assert.deepStrictEqual(violations, [], `axe-core on ${what}`)
}

const shot = async (page: Page, name: string, width: "laptop" | "phone") => {
  const image = await page.screenshot({ fullPage: true })
  assert.isAbove(image.length, 1000)
  if (SHOTS !== undefined) {
    fs.mkdirSync(SHOTS, { recursive: true })
    fs.writeFileSync(path.join(SHOTS, `${name}-${width}.png`), image)
  }
}

const text = (page: Page) => page.evaluate("document.body.innerText").then(String)

/** Waits for `locator` to be visible; on time-out the error shows what the page showed instead. */
const visible = async (page: Page, locator: Locator) => {
  try {
    await locator.waitFor(WAIT)
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\npage text: ${(await text(page)).slice(0, 2000)}`,
      { cause: error }
    )
  }
}

const openConsole = async (viewport: { width: number; height: number }) => {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  await page.goto(`${env.base}/console`, { waitUntil: "load" })
  await page.getByLabel("API key").fill(env.key)
  await page.getByRole("button", { name: "Open the console" }).click()
  await visible(page, page.getByRole("navigation", { name: "Sections" }))
  return page
}

describe("svc console", () => {
  it("starts svc-server and svc-scheduler on a seeded database", async () => {
    const started = await Effect.runPromise(
      Effect.gen(function*() {
        const db = yield* database
        const now = Date.now()
        // A Florida row open one hour a day, at an hour that is not now in New York: stricter than the default policy's
        // 08:00-20:00, so the org may set it; +1305 numbers are then held until that hour.
        const minute = newYorkMinute(now)
        const hoursStart = minute < 14 * 60 ? 19 * 60 : 8 * 60
        const days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        const policyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-console-")), "policy.json")
        fs.writeFileSync(
          policyFile,
          JSON.stringify({
            rules: [{
              jurisdiction: "FL",
              hours: [{ days, start: hoursStart, end: hoursStart + 60 }],
              noHolidays: false,
              attemptsPer24h: 3,
              source: "console browser test",
              verified: "yes"
            }]
          })
        )
        yield* admin(db.url, ["set-calling-policy", "--org", db.orgId, "--file", policyFile])
        yield* admin(db.url, ["create-webhook-secret", "--org", db.orgId, "--grace-hours", "0"])
        yield* db.query((sql) => sql`UPDATE orgs SET concurrency_limit = 2 WHERE org_id = ${db.orgId} RETURNING 1`)
        yield* db.query((sql) =>
          sql`INSERT INTO phone_numbers (org_id, phone_number, created_timestamp)
              VALUES (${db.orgId}, '+14155550100', 0) RETURNING 1`
        )

        // a webhook receiver that always fails: its deliveries are retried and show their attempts
        let hits = 0
        const receiver = http.createServer((request, response) => {
          hits++
          request.resume()
          response.writeHead(500, { "content-type": "text/plain" }).end("receiver down for the test")
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))),
          () => Effect.promise(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
        )
        const receiverPort = (receiver.address() as { port: number }).port
        yield* admin(db.url, [
          "set-webhook",
          "--org",
          db.orgId,
          "--url",
          `http://127.0.0.1:${receiverPort}/hooks`,
          "--events",
          "call_ended"
        ])

        const agent = yield* referenceServer
        const { base, server } = yield* startServer(db.url)
        const scheduler = yield* startScheduler(db.url, "console-worker", {
          // slow enough calls that the batch is still dialling while the test looks at it, cancels it
          SIMULATED_DIALER_LATENCY_MS: "400",
          SIMULATED_DIALER_SEED: "7",
          SCHEDULER_POLL_MS: "100"
        })
        return {
          base,
          key: db.key,
          dialling: "",
          held: "",
          testJob: "",
          hoursStart,
          webhookHits: () => hits,
          output: () => `${server.output()}\n${scheduler.output()}`,
          agent
        }
      }).pipe(Scope.provide(scope))
    )
    env = started
    const dialling = await api("POST", "/create-batch-call", {
      name: "Spring renewals",
      from_number: "+14155550100",
      tasks: Array.from({ length: DIALLED_TASKS }, (_, i) => ({
        to_number: `+44207946${String(i).padStart(4, "0")}`,
        metadata: { crm_id: i }
      }))
    })
    const held = await api("POST", "/create-batch-call", {
      name: "Miami follow-ups",
      from_number: "+14155550100",
      tasks: Array.from({ length: 5 }, (_, i) => ({ to_number: `+1305555${String(1000 + i)}` }))
    })
    for (const [i, first] of ["Ada", "Grace", "Alan"].entries()) {
      await api("POST", "/create-contact", {
        phone_number: `+44207946${String(i).padStart(4, "0")}`,
        first_name: first,
        last_name: "Tester",
        external_id: `crm-${i}`
      })
    }
    for (let i = 0; i < 40; i++) {
      await api("POST", "/create-contact", {
        phone_number: `+1202555${String(2000 + i)}`,
        first_name: `Contact ${i}`
      })
    }
    const engine = { type: "custom-llm", llm_websocket_url: started.agent }
    const ids: Array<string> = []
    for (
      const definition of [
        {
          name: "greets",
          user_turns: ["Hello"],
          assertions: [{ type: "contains", value: "You said: Hello" }]
        },
        {
          name: "approves refunds",
          user_turns: ["I want a refund"],
          assertions: [{ type: "contains", value: "refund approved", turn: 1 }]
        }
      ]
    ) {
      const created = await api("POST", "/create-test-case-definition", {
        ...definition,
        type: "scripted",
        response_engine: engine
      })
      ids.push(String(created["test_case_definition_id"]))
    }
    const job = await api("POST", "/create-batch-test", { response_engine: engine, test_case_definition_ids: ids })
    env = {
      ...env,
      dialling: String(dialling["batch_call_id"]),
      held: String(held["batch_call_id"]),
      testJob: String(job["test_case_batch_job_id"])
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  }, 180_000)

  it("asks for the key, and returns to the prompt with the API's message when the key is wrong", async () => {
    const context = await browser.newContext({ viewport: LAPTOP })
    const page = await context.newPage()
    await page.goto(`${env.base}/console`, { waitUntil: "load" })
    await visible(page, page.getByLabel("API key"))
    await axeCheck(page, "the key prompt")
    await shot(page, "key-prompt", "laptop")
    await page.getByLabel("API key").fill("not-a-key")
    await page.getByRole("button", { name: "Open the console" }).click()
    await visible(page, page.getByRole("alert").filter({ hasText: "API key" }))
    await visible(page, page.getByLabel("API key"))
    assert.isNull(await page.evaluate("sessionStorage.getItem('svc.console.apiKey')"), "a refused key is forgotten")
    assert.notInclude(page.url(), "not-a-key")
    await context.close()
  }, 90_000)

  it("lists the batches, and a batch's progress moves while the scheduler dials it", async () => {
    const page = await openConsole(LAPTOP)
    await visible(page, page.getByRole("link", { name: "Spring renewals" }))
    await visible(page, page.getByRole("link", { name: "Miami follow-ups" }))
    await axeCheck(page, "the batches list")
    await shot(page, "batches", "laptop")
    assert.notInclude(page.url(), env.key, "the key is never in the URL")

    await page.getByRole("link", { name: "Spring renewals" }).click()
    const bar = page.getByRole("progressbar", { name: /Spring renewals/ })
    await visible(page, bar)
    const first = Number(await bar.getAttribute("aria-valuenow"))
    // the page's CSP refuses string evaluation, so the attribute is read from here
    await eventually(
      async () => Number(await bar.getAttribute("aria-valuenow")) > first,
      "the progress bar to move",
      { timeoutMs: 90_000, everyMs: 250 }
    )
    const later = Number(await bar.getAttribute("aria-valuenow"))
    assert.isAbove(later, first)
    assert.isBelow(first, DIALLED_TASKS, "the batch was still dialling when the page first showed it")
    // the chart has samples and the tasks table rows
    await visible(page, page.locator(".chart canvas").first())
    await visible(page, page.getByRole("table", { name: "Tasks" }).getByRole("row").nth(3))
    await axeCheck(page, "a dialling batch")
    await shot(page, "batch", "laptop")
    await page.context().close()
  }, 150_000)

  it("shows a held number's rule and its opening time", async () => {
    const progress = await api("GET", `/get-batch-call/${env.held}`)
    const legal = progress["legal_hours"] as { zone_sets: Array<Json> }
    const set = legal.zone_sets[0]!
    const expected = nextNewYorkOpening(Date.now() - 60_000, env.hoursStart)
    const page = await openConsole(LAPTOP)
    await page.goto(`${env.base}/console#/batches/${env.held}`)
    const zoneSets = page.getByRole("table", { name: "Zone sets with pending tasks" })
    await visible(page, zoneSets)
    const row = zoneSets.getByRole("row").nth(1)
    const cells = await row.getByRole("cell").allInnerTexts()
    // zones, rules, pending, held by (+ reason), next opening
    assert.include(cells[0], "America/New_York")
    assert.include(cells[1], "FL")
    assert.strictEqual(cells[2], "5")
    assert.match(cells[3] ?? "", /^FL /, "held by the Florida row")
    assert.include(cells[3], String(set["state_reason"]))
    const opening = Date.parse(String(await row.getByRole("cell").nth(4).locator("time").getAttribute("datetime")))
    assert.strictEqual(opening, expected, "the opening shown is the next time the Florida row opens in New York")
    assert.strictEqual(set["next_opening_timestamp"], expected)
    await visible(page, page.getByRole("list", { name: "Next openings of the held zone sets" }))
    // the tasks say the same, each
    await visible(page, page.getByRole("table", { name: "Tasks" }).getByText(String(set["state_reason"])).first())
    await axeCheck(page, "a held batch")
    await shot(page, "batch-held", "laptop")
    await page.context().close()
  }, 90_000)

  it("shows a failed webhook delivery's attempts on its call's page and on the webhooks page", async () => {
    let failing: Json | undefined
    await eventually(
      async () => {
        const page = await api("POST", "/list-webhook-deliveries", { limit: 5 })
        failing = (page["items"] as Array<Json>).find((d) => d["failing"] === true && Number(d["attempt_count"]) >= 2)
        return failing !== undefined
      },
      () => `a delivery with two failed attempts (receiver hit ${env.webhookHits()} times)`,
      { timeoutMs: 90_000, everyMs: 250, state: () => env.output().slice(-1500) }
    )
    const callId = String(failing!["call_id"])
    const page = await openConsole(LAPTOP)
    await page.goto(`${env.base}/console#/calls?batch_call_id=${env.dialling}`)
    await visible(page, page.getByRole("table", { name: "Calls" }).getByRole("row").nth(2))
    await axeCheck(page, "the calls list")
    await shot(page, "calls", "laptop")

    await page.goto(`${env.base}/console#/calls/${callId}`)
    const attempts = page.getByRole("table", { name: /Attempts of call_ended/ })
    await visible(page, attempts)
    const rows = await attempts.getByRole("row").allInnerTexts()
    assert.isAtLeast(rows.length - 1, 2, rows.join(" | "))
    for (const row of rows.slice(1)) assert.include(row, "HTTP 500")
    assert.include(await text(page), "Disconnection reason")
    await axeCheck(page, "a call")
    await shot(page, "call", "laptop")

    await page.getByRole("link", { name: "Webhooks" }).click()
    const table = page.getByRole("table", { name: "Webhook deliveries, failing first" })
    await visible(page, table.getByRole("row").nth(1))
    assert.include(await table.getByRole("row").nth(1).innerText(), "retrying")
    await table.getByRole("row").nth(1).getByRole("button", { name: /Attempts of/ }).click()
    const shown = page.getByRole("region", { name: "Selected delivery" }).getByRole("table")
    await visible(page, shown)
    assert.include(await shown.innerText(), "HTTP 500")
    await axeCheck(page, "the webhook deliveries")
    await shot(page, "webhooks", "laptop")
    await page.context().close()
  }, 150_000)

  it("searches contacts and shows a contact's conversations", async () => {
    const page = await openConsole(LAPTOP)
    await page.getByRole("link", { name: "Contacts" }).click()
    // every number dialled becomes a contact too, so the total grows while the batch dials
    await visible(page, page.getByText(/^\d[\d,]* contacts$/))
    await page.getByLabel("Search").fill("Grace")
    await visible(page, page.getByText("1 contact matches"))
    await axeCheck(page, "the contacts")
    await page.getByLabel("Search").fill("")
    await visible(page, page.getByText(/^\d[\d,]* contacts$/))
    await shot(page, "contacts", "laptop")
    // the newest conversations come first: Ada is found by searching, as a user would
    await page.getByLabel("Search").fill("Ada")
    await visible(page, page.getByText("1 contact matches"))
    await page.getByRole("link", { name: "Ada Tester" }).click()
    // Ada's number is the dialling batch's first task: dialled first
    await page.getByRole("table", { name: "Conversations" }).getByRole("link").first().waitFor({ timeout: 90_000 })
    await axeCheck(page, "a contact")
    await shot(page, "contact", "laptop")
    await page.context().close()
  }, 150_000)

  it("shows a batch test's verdicts and a run's transcript", async () => {
    await eventually(
      async () => (await api("GET", `/get-batch-test/${env.testJob}`))["status"] === "complete",
      "the batch test to complete",
      { timeoutMs: 90_000, everyMs: 200, state: () => env.output().slice(-1500) }
    )
    const page = await openConsole(LAPTOP)
    await page.getByRole("link", { name: "Tests" }).click()
    await page.getByLabel("Batch test job id").fill(env.testJob)
    await page.getByRole("button", { name: "Open" }).click()
    const runs = page.getByRole("table", { name: "Test runs" })
    await visible(page, runs.getByRole("row").nth(2))
    const rows = await runs.getByRole("row").allInnerTexts()
    assert.match(rows[1] ?? "", /greets[\s\S]*pass/)
    assert.match(rows[2] ?? "", /approves refunds[\s\S]*fail/)
    await runs.getByRole("row").nth(2).getByRole("button").click()
    await visible(page, page.getByText("refund approved").first())
    await visible(page, page.getByText("I want a refund").first())
    await axeCheck(page, "a batch test")
    await shot(page, "test", "laptop")
    await page.context().close()
  }, 150_000)

  it("says when the API asks it to wait (429), and goes on after Retry-After", async () => {
    const page = await openConsole(LAPTOP)
    // the page's own first list request is answered before the route is set: only the Refresh meets the 429 (on a
    // loaded machine the first request could otherwise take it, and the Refresh's answer clear the message at once)
    await visible(page, page.getByRole("link", { name: "Spring renewals" }))
    let refused = 0
    await page.route("**/list-batch-calls", async (route) => {
      if (refused++ === 0) {
        await route.fulfill({
          status: 429,
          headers: { "retry-after": "1", "content-type": "application/json" },
          body: JSON.stringify({ status: "error", message: "rate limited" })
        })
      } else await route.continue()
    })
    await page.getByRole("button", { name: "Refresh" }).click()
    await visible(page, page.getByRole("status").filter({ hasText: "429 (rate limited): retrying in 1 s" }).first())
    // the retry after 1 s gets through: the status line empties again
    await eventually(() => refused >= 2, "the retry after Retry-After", { timeoutMs: 30_000 })
    await page.getByRole("status").filter({ hasText: "429" }).waitFor({ state: "detached", timeout: 30_000 })
    await visible(page, page.getByRole("link", { name: "Spring renewals" }))
    await page.context().close()
  }, 150_000)

  it("cancels a batch from its page: the API then answers it cancelled, nothing pending", async () => {
    const page = await openConsole(LAPTOP)
    await page.goto(`${env.base}/console#/batches/${env.dialling}`)
    await page.getByRole("button", { name: "Cancel batch…" }).click()
    await page.getByRole("button", { name: "Yes, cancel the batch" }).click()
    await visible(page, page.getByTestId("batch-status").filter({ hasText: "cancelled" }))
    const after = await api("GET", `/get-batch-call/${env.dialling}`)
    assert.strictEqual(after["status"], "cancelled")
    const tasks = after["tasks"] as Record<string, number>
    assert.strictEqual(tasks["pending"], 0)
    assert.isAbove(tasks["cancelled"]!, 0, "some tasks were still pending when it was cancelled")
    await page.context().close()
  }, 150_000)

  it("fits a phone's width on every page, with no serious accessibility violation", async () => {
    const page = await openConsole(PHONE)
    const pages: ReadonlyArray<readonly [string, string, string | RegExp]> = [
      ["batches", "#/batches", "Spring renewals"],
      ["batch", `#/batches/${env.dialling}`, "Tasks by state"],
      ["batch-held", `#/batches/${env.held}`, "Zone sets with pending tasks"],
      ["calls", `#/calls?batch_call_id=${env.dialling}`, "Calls"],
      ["webhooks", "#/webhooks", "Webhook deliveries"],
      ["contacts", "#/contacts", /^\d[\d,]* contacts$/],
      ["test", `#/tests/${env.testJob}`, "greets"]
    ]
    for (const [name, route, marker] of pages) {
      await page.goto(`${env.base}/console${route}`)
      await visible(page, page.getByText(marker).first())
      const overflow = Number(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
      const wide = overflow <= 1 ? "" : String(
        await page.evaluate(
          "[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1)" +
            ".slice(0, 8).map((e) => e.tagName + '.' + e.className).join(', ')"
        )
      )
      assert.isAtMost(overflow, 1, `${name} is wider than the phone's screen: ${wide}`)
      await axeCheck(page, `${name} at phone width`)
      await shot(page, name, "phone")
    }
    await page.context().close()
  }, 150_000)

  it("stops everything it started", async () => {
    await browser?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)
})
