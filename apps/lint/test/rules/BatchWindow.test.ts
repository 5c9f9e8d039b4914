import { assert, describe, it } from "@effect/vitest"
import type { CallTimeWindow, Weekday } from "@svc/domain/CallWindow.ts"
import { isOpen } from "@svc/domain/CallWindow.ts"
import { constraintOf, LegalGrouper } from "@svc/domain/compliance/LegalGroups.ts"
import { isLegalAt } from "@svc/domain/compliance/LegalHours.ts"
import { utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import * as fs from "node:fs"
import * as path from "node:path"
import * as LintConfig from "../../src/commands/LintConfig.ts"
import {
  type BatchFinding,
  checkBatchCall,
  isBatchCallBody,
  TaskGrouper,
  taskList
} from "../../src/rules/BatchWindow.ts"
import { DAY_MS, legalTimeline } from "../../src/rules/LegalTimeline.ts"
import { lintIn, project, runBin, summary } from "../support/Harness.ts"
import { sarifErrors } from "../support/Sarif.ts"

// One number per place of issue 15's end-to-end test (zones from decision 0620's data).
const hawaii = "+18085550100" // Pacific/Honolulu, UTC-10, no DST
const arizona = "+16025550100" // America/Phoenix, UTC-7, no DST
const chicago = "+13125550100" // America/Chicago
const newYork = "+12125550100" // America/New_York
const florida = "+13055550100" // America/New_York, FL 08:00-20:00 on top of the federal rule
const saskatchewan = "+13065550100" // America/Regina, UTC-6, no DST
const alabama = "+12055550100" // America/Chicago, AL 08:00-20:00 Mon-Sat, no holidays

const ny = (start: number, end: number, day?: ReadonlyArray<Weekday>): CallTimeWindow => ({
  windows: [{ start: start * 60, end: end * 60 }],
  timezone: "America/New_York",
  ...(day === undefined ? {} : { day })
})

const body = (numbers: ReadonlyArray<string>, window?: unknown) => ({
  from_number: "+14155550123",
  tasks: numbers.map((to_number) => ({ to_number })),
  ...(window === undefined ? {} : { call_time_window: window })
})

const check = (doc: unknown, asOf = "2026-12-01") => checkBatchCall(doc, utcMidnight(asOf))

/** `rule tasks[i]` per finding: which rule fired at which task. */
const at = (findings: ReadonlyArray<BatchFinding>) =>
  findings.map((f) => `${f.ruleId} ${f.path.map((p) => typeof p === "number" ? `[${p}]` : `.${p}`).join("")}`)

describe("BatchWindow", () => {
  const six = [hawaii, arizona, chicago, newYork, florida, saskatchewan]

  it("reports nothing for a window legal all year in all six places", () => {
    // 13:00-15:00 Eastern is 08:00-10:00 in Honolulu in winter and 07:00-09:00 under DST: the second hour is legal.
    assert.deepStrictEqual(check(body(six, ny(13, 15))), [])
    assert.deepStrictEqual(check(body(six, ny(13, 15)), "2027-06-15"), [])
  })

  it("flags the places where an Eastern morning window is never legal, and Saskatchewan under DST only", () => {
    // 09:00-10:00 Eastern: 03:00/04:00 in Honolulu, 06:00/07:00 in Phoenix (federal rule opens at 08:00);
    // Chicago, New York and Florida always legal; Regina 08:00 in winter, 07:00 under DST.
    const findings = check(body(six, ny(9, 10)))
    assert.deepStrictEqual(at(findings), [
      "batch-window-never-legal .tasks[0].to_number",
      "batch-window-never-legal .tasks[1].to_number",
      "batch-window-seasonal .tasks[5].to_number"
    ])
    assert.strictEqual(
      findings[0]!.message,
      "call_time_window 09:00-10:00 America/New_York can never be dialled for task 0 (zones Pacific/Honolulu; " +
        "rules US 08:00-21:00): it never overlaps US 08:00-21:00 in Pacific/Honolulu within 366 days from 2026-12-01"
    )
    assert.include(
      findings[2]!.message,
      "legal until 2027-03-13, then no legal instant from 2027-03-14 to 2027-11-06 (238 days; " +
        "legal again on 2027-11-07)"
    )
  })

  it("names the state rule that alone rules a window out (Florida closes at 20:00)", () => {
    const findings = check(body([newYork, florida], ny(20, 21)))
    assert.deepStrictEqual(at(findings), ["batch-window-never-legal .tasks[1].to_number"])
    assert.include(findings[0]!.message, "(zones America/New_York; rules US 08:00-21:00, FL 08:00-20:00)")
    assert.include(findings[0]!.message, "it never overlaps FL 08:00-20:00 in America/New_York")
  })

  it("says when only the zones together rule a window out (an unknown area code: 23 zones)", () => {
    // Each of the 23 zones alone has legal hours inside 01:00-02:00 or 03:00-13:00 UTC; never all at once.
    const window = { timezone: "UTC", windows: [{ start: 60, end: 120 }, { start: 180, end: 780 }] }
    const findings = check(body(["+16245550100"], window))
    assert.deepStrictEqual(at(findings), ["batch-window-never-legal .tasks[0].to_number"])
    assert.include(
      findings[0]!.message,
      "zones 23 zones: America/Adak, America/Anchorage, America/Boise, ... Pacific/Saipan"
    )
    assert.include(findings[0]!.message, "no instant is legal in all of its zones under all of its rules at once")
  })

  it("flags a Sunday-only window for a state that forbids Sunday calls, and not for the others", () => {
    const findings = check(body([chicago, alabama], ny(9, 20, ["Sunday"])))
    assert.deepStrictEqual(at(findings), ["batch-window-never-legal .tasks[1].to_number"])
    assert.include(findings[0]!.message, "call_time_window 09:00-20:00 Sunday America/New_York")
    assert.include(findings[0]!.message, "AL 08:00-20:00 Mon-Sat no holidays in America/Chicago")
  })

  it("reads a DST-only window with the timeline of the as-of date, on both sides of the change", () => {
    // 23:00-24:00 Eastern is 20:00 in Phoenix under DST (legal) and 21:00 in winter (closed): legal in summer only.
    // Dates are UTC: 23:00 EDT is 03:00Z of the next day.
    const winter = check(body([arizona], ny(23, 24)), "2026-12-01")
    assert.deepStrictEqual(at(winter), ["batch-window-seasonal .tasks[0].to_number"])
    assert.include(
      winter[0]!.message,
      "not legal from the as-of date 2026-12-01 to 2027-03-14 (104 days; legal again on 2027-03-15); " +
        "1 more break of over a week"
    )
    const summer = check(body([arizona], ny(23, 24)), "2026-07-01")
    assert.include(
      summer[0]!.message,
      "legal until 2026-11-01, then no legal instant from 2026-11-02 to 2027-03-14 (133 days; " +
        "legal again on 2027-03-15)"
    )
    // The mirror image: 10:00-11:00 Eastern is 08:00 in Phoenix in winter, 07:00 under DST.
    const mirror = check(body([arizona], ny(10, 11)), "2026-07-01")
    assert.include(mirror[0]!.message, "not legal from the as-of date 2026-07-01 to 2026-10-31")
  })

  it("groups tasks by zones and rules, so the finding lists every task of the group compressed", () => {
    const numbers = Array.from({ length: 60 }, (_, i) => i <= 41 || i === 57 ? hawaii : chicago)
    const findings = check(body(numbers, ny(9, 10)))
    assert.strictEqual(findings.length, 1)
    assert.include(findings[0]!.message, "for tasks 0-41, 57 (43 tasks)")
    assert.strictEqual(taskList([3]), "task 3")
    assert.strictEqual(
      taskList([0, 2, 4, 6, 8, 10, 12, 14, 16, 17, 18]),
      "tasks 0, 2, 4, 6, 8, 10, 12, 14, ... (11 tasks)"
    )
  })

  it("treats an absent window as any time: only legal hours decide", () => {
    assert.deepStrictEqual(check(body(six)), [])
    // An unknown area code has the 23 US and Canadian zones; some instant is still legal in all of them.
    assert.deepStrictEqual(check(body(["+16245550100"])), [])
  })

  it("leaves numbers outside the NANP unconstrained, as dispatch does", () => {
    assert.deepStrictEqual(check(body(["+447700900123", "+33612345678"], ny(3, 4))), [])
  })

  it("reports malformed numbers and windows by field, never evaluating a window the API would refuse", () => {
    const findings = check({
      from_number: "+14155550123",
      tasks: [
        { to_number: "555-1234" },
        { to_number: 14155550100 },
        {},
        "+12125550100",
        { to_number: "sip:desk@pbx.example.com", ignore_e164_validation: true },
        { to_number: hawaii }
      ],
      call_time_window: { windows: [{ start: 600, end: 540 }], timezone: "America/Nowhere", day: ["sun"] }
    })
    assert.deepStrictEqual(findings.map((f) => [f.ruleId, f.path.join("."), f.message]), [
      [
        "batch-call-invalid",
        "call_time_window.windows.0.end",
        "call_time_window.windows[0].end must be greater than start; windows may not cross midnight, split it " +
        "into {start: 600, end: 1440} and {start: 0, end: 540} (got start=600, end=540)"
      ],
      [
        "batch-call-invalid",
        "call_time_window.timezone",
        "call_time_window.timezone must be an IANA time zone name such as \"America/Los_Angeles\" or " +
        "\"Europe/London\" (got \"America/Nowhere\")"
      ],
      [
        "batch-call-invalid",
        "call_time_window.day.0",
        "call_time_window.day[0] must be one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday " +
        "(full English day names, capitalised) (got \"sun\")"
      ],
      [
        "batch-call-invalid",
        "tasks.0.to_number",
        "tasks[0].to_number must be an E.164 number like +14155550123 (got \"555-1234\")"
      ],
      [
        "batch-call-invalid",
        "tasks.1.to_number",
        "tasks[1].to_number must be a non-empty string (got the number 14155550100; quote it in YAML)"
      ],
      ["batch-call-invalid", "tasks.2.to_number", "tasks[2].to_number is required"],
      ["batch-call-invalid", "tasks.3", "tasks[3] must be an object with to_number (got \"+12125550100\")"]
    ])
  })

  it("counts malformed tasks past the hundredth in one problem", () => {
    const findings = check(body(Array.from({ length: 150 }, () => "nope")))
    assert.strictEqual(findings.length, 101)
    assert.strictEqual(findings[100]!.message, "50 more tasks have a malformed to_number (150 in all)")
  })

  it("survives any shape of input without throwing", () => {
    for (const doc of [null, 3, "x", [], { tasks: "x" }, { tasks: [] }, { tasks: [null] }, { call_time_window: 1 }]) {
      assert.isAbove(check(doc).length, 0, JSON.stringify(doc))
    }
    // YAML aliases can make a cycle (`a: &x [*x]`)
    const cycle: Array<unknown> = []
    cycle.push(cycle)
    assert.deepStrictEqual(check({ from_number: "+1", tasks: [cycle] }).map((f) => f.message), [
      "tasks[0] must be an object with to_number (got [...])"
    ])
  })

  it("detects create-batch-call bodies by content", () => {
    assert.isTrue(isBatchCallBody(body([hawaii])))
    assert.isFalse(isBatchCallBody({ tasks: [{ to_number: hawaii }] }), "no from_number")
    assert.isFalse(isBatchCallBody({ from_number: "+1", tasks: [{ name: "x" }] }), "tasks without to_number")
    assert.isFalse(isBatchCallBody({ agent_id: "a", from_number: "+1" }))
  })
})

describe("TaskGrouper", () => {
  it("assigns every task the group a plain LegalGrouper (create-batch-call's) assigns, in the same numbering", () => {
    let seed = 42
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return Math.floor((seed / 2147483648) * n)
    }
    const digits = (n: number) => Array.from({ length: n }, () => random(10)).join("")
    const odd = ["+1", "+1a", "+12", "+1212", "+1212555", "+1 212 555 0100", "+44", "+", "", "1212555", "+1624"]
    const numbers = Array.from({ length: 50_000 }, (_, i) =>
      i % 50 === 0
        ? odd[random(odd.length)]!
        : i % 7 === 0
        ? `+${1 + random(9)}${digits(random(12))}`
        : `+1${200 + random(800)}${digits(random(9))}`)
    const plain = new LegalGrouper()
    const memo = new TaskGrouper()
    for (const n of numbers) assert.strictEqual(memo.assign(n), plain.assign(n), n)
    assert.deepStrictEqual(memo.groups, plain.groups)
    assert.isAbove(plain.groups.length, 50)
  })
})

describe("LegalTimeline", () => {
  it("finds the first legal instant and the runs of more than a week without one", () => {
    const from = utcMidnight("2026-12-01")
    const timeline = legalTimeline(from, 366 * DAY_MS, ["America/Regina"], [{
      jurisdiction: "US",
      hours: [{
        days: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
        start: 480,
        end: 1260
      }],
      noHolidays: false,
      source: "test",
      verified: "yes"
    }], ny(9, 10))
    // 09:00 EST on 2026-12-01 is 14:00Z, 08:00 in Regina: legal at once.
    assert.strictEqual(timeline.first, Date.parse("2026-12-01T14:00:00Z"))
    assert.deepStrictEqual(
      timeline.breaks.map((b) => [new Date(b.from).toISOString(), new Date(b.to).toISOString(), b.open]),
      [["2027-03-14T00:00:00.000Z", "2027-11-07T00:00:00.000Z", false]]
    )
  })
})

describe("LegalTimeline against a half-hourly oracle", () => {
  // Every window and rule here opens and closes on the half hour, and every zone's offset is a multiple of 30
  // minutes, so sampling each half hour finds every legal UTC day and the first legal instant exactly.
  const oracle = (
    from: number,
    days: number,
    zones: ReadonlyArray<string>,
    rules: Parameters<typeof isLegalAt>[2],
    window: CallTimeWindow | undefined
  ) => {
    const legalDays = new Set<number>()
    let first: number | undefined
    for (let t = from; t < from + days * DAY_MS; t += 30 * 60_000) {
      if (isLegalAt(t, zones, rules) && (window === undefined || isOpen(window, t))) {
        first ??= t
        legalDays.add(Math.floor(t / DAY_MS))
      }
    }
    const breaks: Array<[string, string, boolean]> = []
    if (first === undefined) return { first, breaks }
    const firstDay = from / DAY_MS
    let run = firstDay
    for (let day = firstDay; day <= firstDay + days; day++) {
      const end = day === firstDay + days
      if (!end && !legalDays.has(day)) continue
      if (day - run >= 8) breaks.push([new Date(run * DAY_MS).toISOString(), new Date(day * DAY_MS).toISOString(), end])
      run = day + 1
    }
    return { first, breaks }
  }
  const london = (start: number, end: number): CallTimeWindow => ({
    windows: [{ start: start * 60, end: end * 60 }],
    timezone: "Europe/London"
  })
  const windows: ReadonlyArray<CallTimeWindow | undefined> = [
    undefined,
    ny(9, 10),
    ny(23, 24),
    ny(13, 15),
    ny(9, 20, ["Sunday"]),
    ny(10, 12, ["Monday"]),
    ny(9, 11, ["Sunday"]),
    ny(17, 19, ["Monday", "Tuesday"]),
    // 20:00-21:00 Eastern in winter; while the US has DST and the UK not yet (March) or no longer (October), 21:00.
    london(1, 2)
  ]
  const numbers = [
    hawaii,
    arizona,
    saskatchewan,
    florida,
    alabama,
    newYork,
    "+16245550100", // unknown area code: 23 zones
    "+12085550100", // Boise and Los Angeles
    "+12145550100", // Texas: 12:00-21:00 on Sundays
    "+12155550100" // Pennsylvania: no Sundays, no holidays
  ]

  for (const asOf of ["2026-12-01", "2027-03-20", "2027-10-25"]) {
    it(`agrees on the first legal instant and every break, as of ${asOf}`, () => {
      const from = utcMidnight(asOf)
      let compared = 0
      for (const number of numbers) {
        const { rules, zones } = constraintOf(number)!
        for (const window of windows) {
          const got = legalTimeline(from, 366 * DAY_MS, zones, rules, window)
          const want = oracle(from, 366, zones, rules, window)
          const label = `${number} ${JSON.stringify(window)}`
          assert.strictEqual(got.first, want.first, label)
          assert.deepStrictEqual(
            got.breaks.map((b) => [new Date(b.from).toISOString(), new Date(b.to).toISOString(), b.open]),
            want.breaks,
            label
          )
          compared++
        }
      }
      assert.strictEqual(compared, numbers.length * windows.length)
    }, 120_000)
  }
})

describe("svc-lint on batch call definitions", () => {
  const yaml = [
    "# morning calls, Eastern time",
    "from_number: \"+14155550123\"",
    "call_time_window:",
    "  timezone: America/New_York",
    "  windows:",
    "    - { start: 540, end: 600 }",
    "tasks:",
    `  - to_number: "${chicago}"`,
    `  - to_number: "${hawaii}"`,
    `  - to_number: "${saskatchewan}"`,
    "  - to_number: \"555-0100\"",
    ""
  ].join("\n")
  const json = `${JSON.stringify(body([chicago, hawaii, saskatchewan], ny(9, 10)), null, 2)}\n`

  it("finds them in YAML and JSON and points at the task's to_number", () => {
    const dir = project({ "batches/morning.yaml": yaml, "batches/morning.json": json, "other.json": "{\"a\": 1}" })
    const { problems } = lintIn(dir, "2026-12-01")
    assert.deepStrictEqual(summary(problems), [
      "batches/morning.json:8:7 batch-window-never-legal error",
      "batches/morning.json:11:7 batch-window-seasonal warning",
      "batches/morning.yaml:9:5 batch-window-never-legal error",
      "batches/morning.yaml:10:5 batch-window-seasonal warning",
      "batches/morning.yaml:11:5 batch-call-invalid error"
    ])
    assert.strictEqual(problems[0]!.jsonPath, "$.tasks[1].to_number")
  })

  it("checks every document of a multi-document YAML file, with an unquoted number and inline suppressions", () => {
    const dir = project({
      "batches.yaml": [
        "from_number: \"+14155550123\"",
        "tasks:",
        `  - to_number: "${chicago}"`,
        "---",
        "from_number: \"+14155550123\"",
        "call_time_window: { timezone: America/New_York, windows: [{ start: 540, end: 600 }] }",
        "tasks:",
        "  - to_number: +12125550100",
        "  # svc-lint-disable-next-line batch-window-never-legal -- Honolulu office calls in its own batch (OPS-7)",
        `  - to_number: "${hawaii}"`,
        `  - to_number: "${arizona}"`,
        ""
      ].join("\n")
    })
    const { problems, suppressed } = lintIn(dir, "2026-12-01")
    assert.deepStrictEqual(summary(problems), [
      "batches.yaml:8:5 batch-call-invalid error",
      "batches.yaml:11:5 batch-window-never-legal error"
    ])
    assert.include(problems[0]!.message, "got the number 12125550100; quote it in YAML")
    assert.strictEqual(problems[1]!.jsonPath, "$.tasks[2].to_number")
    assert.strictEqual(suppressed, 1)
  })

  it("reads a document as a batch when the config says kind: batch-call, and honours rule levels", async () => {
    const dir = project({
      "svc-lint.config.yaml": [
        "rules: { batch-window-seasonal: off }",
        "overrides:",
        "  - files: [\"legacy/**\"]",
        "    kind: batch-call",
        ""
      ].join("\n"),
      // no from_number: not detected, but forced by the override
      "legacy/old.json": JSON.stringify({ tasks: [{ to_number: hawaii }, { to_number: saskatchewan }] }),
      "plain/old.json": JSON.stringify({ tasks: [{ to_number: hawaii }] })
    })
    const config = await LintConfig.load(dir, undefined)
    const { problems } = lintIn(dir, "2026-12-01", { config })
    // An absent window is any time: both numbers have legal hours, nothing to report; now with a window.
    assert.deepStrictEqual(summary(problems), [])
    fs.writeFileSync(
      path.join(dir, "legacy", "old.json"),
      JSON.stringify({ tasks: [{ to_number: hawaii }, { to_number: saskatchewan }], call_time_window: ny(9, 10) })
    )
    assert.deepStrictEqual(summary(lintIn(dir, "2026-12-01", { config }).problems), [
      "legacy/old.json:1:12 batch-window-never-legal error"
    ])
    fs.writeFileSync(path.join(dir, "svc-lint.config.yaml"), "overrides: [{ files: [\"x\"], kind: batch }]\n")
    let message = ""
    try {
      await LintConfig.load(dir, undefined)
    } catch (error) {
      message = String(error)
    }
    assert.include(
      message,
      "kind: expected one of agent, llm, conversation-flow, flow-component, phone-number, tool, batch-call"
    )
  })

  it("writes valid SARIF with the batch rules' metadata, and lists them in rules and explain", () => {
    const dir = project({ "batch.yaml": yaml })
    const result = runBin(dir, ["--as-of", "2026-12-01", "-f", "sarif"])
    assert.strictEqual(result.status, 1, result.stderr)
    const log = JSON.parse(result.stdout)
    assert.deepStrictEqual(sarifErrors(log), [])
    const run = log.runs[0]
    const ruleIds = run.tool.driver.rules.map((r: { id: string }) => r.id)
    for (const id of ["batch-window-never-legal", "batch-window-seasonal", "batch-call-invalid"]) {
      assert.include(ruleIds, id)
    }
    assert.deepStrictEqual(
      run.results.map((r: { ruleId: string; level: string }) => `${r.ruleId} ${r.level}`),
      ["batch-window-never-legal error", "batch-window-seasonal warning", "batch-call-invalid error"]
    )
    const rules = runBin(dir, ["rules", "--as-of", "2026-12-01", "--json"])
    const listed = JSON.parse(rules.stdout).filter((r: { kind: string }) => r.kind === "batch-call")
    assert.deepStrictEqual(listed.map((r: { id: string; level: string }) => `${r.id} ${r.level}`), [
      "batch-window-never-legal error",
      "batch-window-seasonal warning",
      "batch-call-invalid error"
    ])
    const seasonal = run.results.find((r: { ruleId: string }) => r.ruleId === "batch-window-seasonal")
    assert.strictEqual(seasonal.properties.date, "2027-03-14")
    // svc-lint timeline: the date the Regina task stops being legal, only while it is still ahead
    const timeline = (asOf: string) =>
      JSON.parse(runBin(dir, ["timeline", "--as-of", asOf, "--json"]).stdout).steps.map((
        s: { date: string; ruleId: string; status: string; files: Array<string> }
      ) => `${s.date} ${s.ruleId} ${s.status} ${s.files.join(",")}`)
    assert.deepStrictEqual(timeline("2026-12-01"), ["2027-03-14 batch-window-seasonal not legal batch.yaml"])
    assert.deepStrictEqual(timeline("2027-04-01"), [])
    const explain = runBin(dir, ["explain", "batch-window-never-legal"])
    assert.strictEqual(explain.status, 0)
    assert.include(explain.stdout, "Batch call window never legal at the called parties")
  }, 60_000)
})
