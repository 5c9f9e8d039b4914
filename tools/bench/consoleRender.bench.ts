// The console's first view (issue 33: "a page with a 100,000-task batch or 1M contacts renders its first view in
// <= 1 s on this machine"): headless Chromium (Debian's `chromium`) opens the console served by a real svc-server on
// a seeded database and waits until the first view is on screen:
// - batch page: the 100,000-task batch of the list-plan tests (store/test-support/BatchListsSeed.ts: among 2,500
//   batches), its progress bar, its counts and the first rows of its tasks table;
// - contacts page: an org of 1,000,000 contacts (ContactSeed, the http bench's data), its total and first rows.
// Each round is a new browser context (no cache, key put in session storage before the page loads), timed from the
// navigation to the view (wall clock on this side, Playwright's round trips included); one warm-up round per page is
// not counted. Beside it, the API calls each view makes, timed alone from Node, and the console's shell (the Tests
// page: the same page load and script, no API call) say where the time goes. Also prints the bundle's size
// (apps/console/dist/console.size.json).
//
//   node tools/bench/consoleRender.bench.ts        CONSOLE_BENCH_ROUNDS=n (default 9), BENCH_CONTACTS (1,000,000)
//
// Embedded PostgreSQL in a temporary directory, removed at the end. Prints a Markdown table; exit code 0 either way.
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import * as Database from "@svc/store/db/Database.ts"
import * as EmbeddedPostgres from "@svc/store/db/EmbeddedPostgres.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import * as BatchListsSeed from "@svc/store/test-support/BatchListsSeed.ts"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { chromium, type Page } from "playwright-core"
import { freePort, startServer, stopProcesses } from "./support/SvcProcesses.ts"

const ROUNDS = Number(process.env["CONSOLE_BENCH_ROUNDS"] ?? 9)
const CONTACTS = Number(process.env["BENCH_CONTACTS"] ?? 1_000_000)
const CHROMIUM = process.env["SVC_CHROMIUM"] ?? "/usr/bin/chromium"
const root = path.resolve(import.meta.dirname, "..", "..")

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`)
const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const ms = (n: number) => n.toFixed(0)

const scope = Scope.makeUnsafe()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-console-"))
fs.chmodSync(dataDir, 0o755)
const children: Array<Awaited<ReturnType<typeof startServer>>> = []
try {
  const db = await Effect.runPromise(
    Scope.provide(
      EmbeddedPostgres.start({ dataDir, database: "bench", settings: { shared_buffers: "256MB", jit: "off" } }),
      scope
    )
  )
  const url = (() => {
    const parsed = new URL(Redacted.value(db.adminUrl))
    parsed.pathname = "/bench"
    return parsed.toString()
  })()
  const started = performance.now()
  const { contactsKey, key } = await Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(
        ApiKeys.layer.pipe(Layer.provideMerge(Database.layerFromUrl(Redacted.make(url), { maxConnections: 4 })))
      )
      return yield* Effect.gen(function*() {
        yield* BatchListsSeed.load
        const keys = yield* ApiKeys
        const key = yield* keys.createKey(BatchListsSeed.ORG)
        const contactsOrg = yield* keys.createOrg("a million contacts")
        yield* ContactSeed.load([{ orgId: contactsOrg, contacts: CONTACTS }], { seed: 1 })
        return { key, contactsKey: yield* keys.createKey(contactsOrg) }
      }).pipe(Effect.provideContext(context))
    })).pipe(Effect.orDie)
  )
  log(
    `seeded a ${BatchListsSeed.TASKS}-task batch and ${CONTACTS} contacts in ${
      ((performance.now() - started) / 1000).toFixed(0)
    } s`
  )
  const port = await freePort()
  children.push(await startServer(url, port))
  const base = `http://127.0.0.1:${port}`
  await fetch(`${base}/console`) // builds the bundle if it is missing or stale: not part of a first view

  const api = async (apiKey: string, method: string, route: string, body?: unknown) => {
    const t0 = performance.now()
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    await response.text()
    if (!response.ok) throw new Error(`${route}: ${response.status}`)
    return performance.now() - t0
  }

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"]
  })
  const firstView = async (apiKey: string, route: string, ready: (page: Page) => Promise<void>) => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 860 } })
    await context.addInitScript(`sessionStorage.setItem("svc.console.apiKey", ${JSON.stringify(apiKey)})`)
    const page = await context.newPage()
    const t0 = performance.now()
    await page.goto(`${base}/console${route}`)
    await ready(page)
    const elapsed = performance.now() - t0
    // where the browser spent it: the API calls and the script as it saw them (Resource Timing)
    const spans = String(
      await page.evaluate(
        "performance.getEntriesByType('resource').map((e) => e.name.replace(location.origin, '') + ' ' + " +
          "Math.round(e.startTime) + '+' + Math.round(e.duration)).join(', ') + '; DOMContentLoaded ' + " +
          "Math.round(performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd)"
      )
    )
    log(`  ${route}: ${spans}`)
    await context.close()
    return elapsed
  }
  const batchReady = async (page: Page) => {
    await page.getByRole("progressbar").waitFor({ timeout: 30_000 })
    await page.getByRole("table", { name: "Tasks" }).getByRole("row").nth(5).waitFor({ timeout: 30_000 })
    await page.getByRole("table", { name: "Zone sets with pending tasks" }).or(page.getByText("Tasks by state"))
      .first().waitFor({ timeout: 30_000 })
  }
  const contactsReady = async (page: Page) => {
    await page.getByText(/^\d[\d,]* contacts$/).waitFor({ timeout: 30_000 })
    await page.getByRole("table", { name: "Contacts" }).getByRole("row").nth(5).waitFor({ timeout: 30_000 })
  }

  const shellReady = async (page: Page) => {
    await page.getByLabel("Batch test job id").waitFor({ timeout: 30_000 })
  }

  const sides = {
    shell: { views: [] as Array<number>, api: [] as Array<number> },
    batch: { views: [] as Array<number>, api: [] as Array<number> },
    contacts: { views: [] as Array<number>, api: [] as Array<number> }
  }
  for (let round = 0; round <= ROUNDS; round++) {
    // alternate the order each round, so load on the shared machine hits both alike
    const order = round % 2 === 0 ? ["shell", "batch", "contacts"] as const : ["contacts", "batch", "shell"] as const
    for (const side of order) {
      const view = side === "shell"
        ? await firstView(key, "#/tests", shellReady)
        : side === "batch"
        ? await firstView(key, `#/batches/${BatchListsSeed.BIG}`, batchReady)
        : await firstView(contactsKey, "#/contacts", contactsReady)
      const calls = side === "shell"
        ? 0
        : side === "batch"
        ? Math.max(
          await api(key, "GET", `/get-batch-call/${BatchListsSeed.BIG}`),
          await api(key, "POST", `/list-batch-call-tasks/${BatchListsSeed.BIG}`, { limit: 50 })
        )
        : await api(contactsKey, "POST", "/list-contacts", { limit: 50 })
      if (round === 0) continue // warm-up
      sides[side].views.push(view)
      sides[side].api.push(calls)
      log(`round ${round} ${side}: first view ${ms(view)} ms, slowest API call alone ${ms(calls)} ms`)
    }
  }
  await browser.close()

  const size = JSON.parse(fs.readFileSync(path.join(root, "apps/console/dist/console.size.json"), "utf8")) as Record<
    string,
    { bytes: number; gzip_bytes: number }
  >
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`
  process.stdout.write(
    [
      `Console first view, ${ROUNDS} rounds, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`,
      `(median, p90, max), Chromium ${browser.version()}, ${new Date().toISOString()}`,
      "",
      "| page | first view median | p90 | max | slowest API call of the view, alone (median) |",
      "| --- | --- | --- | --- | --- |",
      ...(["shell", "batch", "contacts"] as const).map((side) => {
        const v = sides[side].views
        const label = side === "shell"
          ? "shell only (Tests page: no API call)"
          : side === "batch"
          ? `batch of ${BatchListsSeed.TASKS.toLocaleString("en-US")} tasks`
          : `contacts, org of ${CONTACTS.toLocaleString("en-US")}`
        return `| ${label} | ${ms(quantile(v, 0.5))} ms | ${ms(quantile(v, 0.9))} ms | ${ms(Math.max(...v))} ms | ${
          ms(quantile(sides[side].api, 0.5))
        } ms |`
      }),
      "",
      `Bundle: console.js ${kib(size["console.js"]!.bytes)} (${kib(size["console.js"]!.gzip_bytes)} gzipped), ` +
      `console.css ${kib(size["console.css"]!.bytes)} (${kib(size["console.css"]!.gzip_bytes)} gzipped)`,
      ""
    ].join("\n")
  )
} finally {
  await stopProcesses(children)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
}
