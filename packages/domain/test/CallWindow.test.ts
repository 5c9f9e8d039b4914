import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Exit, Option, Schema } from "effect"
import {
  CallTimeWindow,
  CanonicalCallTimeWindow,
  canonicalize,
  decodeCallTimeWindow,
  describeIssue,
  isIanaTimeZone,
  isOpen,
  nextClosing,
  nextOpening,
  type Weekday,
  Weekdays
} from "../src/CallWindow.ts"

const at = (iso: string): number => Date.parse(iso)
const iso = (instant: Option.Option<number>): string | undefined =>
  Option.match(instant, { onNone: () => undefined, onSome: (t) => new Date(t).toISOString() })

const decodes = (input: unknown): boolean => Exit.isSuccess(Schema.decodeUnknownExit(CallTimeWindow)(input))
const problemsOf = (input: unknown) =>
  decodeCallTimeWindow(input).pipe(
    Effect.flip,
    Effect.map((error) => error._tag === "InvalidCallWindow" ? error.problems : [error.message])
  )

const window = (start: number, end: number) => ({ start, end })

describe("CallWindow", () => {
  describe("decoding", () => {
    it("accepts end = 1440 (24:00)", () => {
      assert.isTrue(decodes({ windows: [window(1320, 1440)] }))
      assert.isTrue(decodes({ windows: [window(0, 1440)], timezone: "Asia/Tokyo", day: [] }))
    })

    it.effect("rejects start = end, naming the field and both values", () =>
      Effect.gen(function*() {
        const problems = yield* problemsOf({ windows: [window(540, 600), window(600, 600)] })
        assert.deepStrictEqual(problems, [
          "call_time_window.windows[1].end must be greater than start (got start=600, end=600)"
        ])
      }))

    it.effect("rejects a cross-midnight window and says how to split it", () =>
      Effect.gen(function*() {
        const [problem] = yield* problemsOf({ windows: [window(1320, 120)] })
        assert.include(problem, "call_time_window.windows[0].end must be greater than start")
        assert.include(problem, "may not cross midnight")
        assert.include(problem, "(got start=1320, end=120)")
      }))

    it.effect("rejects negative, too large and non-integer minutes", () =>
      Effect.gen(function*() {
        const problems = yield* problemsOf({
          windows: [window(-1, 60), window(0, 1441), window(1.5, 60), window(0, 60.25)]
        })
        assert.deepStrictEqual(problems, [
          "call_time_window.windows[0].start must be between 0 and 1439 (got -1)",
          "call_time_window.windows[1].end must be between 1 and 1440 (1440 is 24:00, the end of the day) (got 1441)",
          "call_time_window.windows[2].start must be an integer number of minutes since local midnight (got 1.5)",
          "call_time_window.windows[3].end must be an integer number of minutes since local midnight (got 60.25)"
        ])
        assert.isFalse(decodes({ windows: [{ start: "540", end: 600 }] }))
      }))

    it.effect("requires at least one window", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* problemsOf({ windows: [] }), [
          "call_time_window.windows must contain at least one {start, end} window (got [])"
        ])
        assert.deepStrictEqual(yield* problemsOf({ timezone: "UTC" }), ["call_time_window.windows is required"])
        assert.deepStrictEqual(yield* problemsOf({ windows: [{ start: 60 }] }), [
          "call_time_window.windows[0].end is required"
        ])
      }))

    it.effect("rejects lower-case and abbreviated day names", () =>
      Effect.gen(function*() {
        const problems = yield* problemsOf({
          windows: [window(540, 600)],
          day: ["monday", "Tue", "Wednesday", "MONDAY"]
        })
        assert.strictEqual(problems.length, 3)
        assert.include(problems[0], "call_time_window.day[0] must be one of Monday, Tuesday,")
        assert.include(problems[0], "(got \"monday\")")
        assert.include(problems[1], "call_time_window.day[1]")
        assert.include(problems[2], "call_time_window.day[3]")
        assert.isTrue(decodes({ windows: [window(540, 600)], day: [...Weekdays] }))
      }))

    it.effect("fails with UnknownTimeZone, not a throw, for a zone the database does not know", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          decodeCallTimeWindow({ windows: [window(540, 600)], timezone: "Mars/Olympus" })
        )
        assert.strictEqual(error._tag, "UnknownTimeZone")
        assert.strictEqual(
          error.message,
          "call_time_window.timezone must be an IANA time zone name such as \"America/Los_Angeles\" or \"Europe/London\" (got \"Mars/Olympus\")"
        )
        for (const name of ["", "+05:00", "-0800", "Eastern", "America/NewYork", "Europe/Londres"]) {
          assert.isFalse(isIanaTimeZone(name), name)
          assert.isFalse(decodes({ windows: [window(540, 600)], timezone: name }), name)
        }
        for (const name of ["America/Los_Angeles", "UTC", "Etc/GMT+5", "Asia/Kolkata", "Australia/Lord_Howe"]) {
          assert.isTrue(isIanaTimeZone(name), name)
        }
      }))

    it.effect("reports the zone with the other problems when it is not the only one", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(decodeCallTimeWindow({ windows: [], timezone: "Nowhere/City" }, "window"))
        assert.strictEqual(error._tag, "InvalidCallWindow")
        assert.include(error.message, "window.windows must contain at least one")
        assert.include(error.message, "window.timezone must be an IANA time zone name")
      }))

    it.effect("names the whole field when the value is not an object", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* problemsOf("9-5"), [
          "call_time_window must be an object with windows, timezone and day (got \"9-5\")"
        ])
      }))

    it("describes failures of a request schema that embeds the window in the same words", () => {
      const Request = Schema.Struct({ name: Schema.String, call_time_window: Schema.optionalKey(CallTimeWindow) })
      const body = { name: "spring", call_time_window: { windows: [window(600, 600)], day: ["Sun"] } }
      const exit = Schema.decodeUnknownExit(Request, { errors: "all" })(body)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.isTrue(Schema.isSchemaError(error))
      if (!Schema.isSchemaError(error)) return
      const problems = describeIssue(error.issue, body, "")
      assert.strictEqual(
        problems[0],
        "call_time_window.windows[0].end must be greater than start (got start=600, end=600)"
      )
      assert.include(problems[1], "call_time_window.day[0] must be one of Monday,")
      assert.include(problems[1], "(got \"Sun\")")
    })

    it("accepts zone links and any letter case, and keeps the spelling the client sent", () => {
      for (const timezone of ["US/Eastern", "america/new_york", "Asia/Kolkata", "Etc/UTC"]) {
        assert.isTrue(decodes({ windows: [window(540, 600)], timezone }), timezone)
        assert.strictEqual(canonicalize({ windows: [window(540, 600)], timezone }).timezone, timezone)
      }
      // Both spellings are the same zone: 2026-07-01T13:30Z is 09:30 EDT.
      const a = canonicalize({ windows: [window(540, 600)], timezone: "US/Eastern" })
      const b = canonicalize({ windows: [window(540, 600)], timezone: "America/New_York" })
      assert.isTrue(isOpen(a, at("2026-07-01T13:30:00Z")))
      assert.isTrue(isOpen(b, at("2026-07-01T13:30:00Z")))
    })

    it("treats a window that skipped decoding with an unknown zone as a defect with a clear message", () => {
      assert.throws(() => isOpen({ windows: [window(540, 600)], timezone: "Nowhere/City" }, 0), /Nowhere\/City/)
    })
  })

  describe("canonicalize", () => {
    it("fills in the default time zone and lists every day when day is omitted or empty", () => {
      const every = canonicalize({ windows: [window(540, 1020)] })
      assert.strictEqual(every.timezone, "America/Los_Angeles")
      assert.deepStrictEqual(every.day, [...Weekdays])
      assert.deepStrictEqual(canonicalize({ windows: [window(540, 1020)], day: [] }), every)
      assert.deepStrictEqual(canonicalize({ windows: [window(540, 1020)], day: [...Weekdays].reverse() }), every)
    })

    it("merges touching windows", () => {
      const c = canonicalize({ windows: [window(600, 660), window(540, 600)], timezone: "Europe/London" })
      assert.deepStrictEqual(c.windows, [window(540, 660)])
    })

    it("merges overlapping and contained windows and sorts the rest by start", () => {
      const c = canonicalize({
        windows: [
          window(1200, 1440),
          window(60, 120),
          window(700, 800),
          window(0, 30),
          window(650, 720),
          window(710, 720)
        ]
      })
      assert.deepStrictEqual(c.windows, [window(0, 30), window(60, 120), window(650, 800), window(1200, 1440)])
    })

    it("orders days Monday..Sunday and drops duplicates", () => {
      const c = canonicalize({ windows: [window(540, 600)], day: ["Sunday", "Friday", "Monday", "Sunday", "Friday"] })
      assert.deepStrictEqual(c.day, ["Monday", "Friday", "Sunday"])
    })

    it("produces values the canonical schema accepts, and is stable under a second pass", () => {
      const c = canonicalize({ windows: [window(600, 660), window(540, 600)], day: ["Sunday", "Monday"] })
      assert.isTrue(Exit.isSuccess(Schema.decodeUnknownExit(CanonicalCallTimeWindow)(c)))
      assert.deepStrictEqual(canonicalize(c), c)
      assert.isFalse(
        Exit.isSuccess(
          Schema.decodeUnknownExit(CanonicalCallTimeWindow)({
            windows: [window(540, 600), window(600, 660)],
            timezone: "UTC",
            day: ["Monday"]
          })
        )
      )
    })
  })

  describe("America/New_York", () => {
    const zone = "America/New_York"

    it("skips the spring-forward gap: 02:30-03:30 on 2026-03-08 opens at 03:00 EDT and closes at 03:30 EDT", () => {
      const w = canonicalize({ windows: [window(150, 210)], timezone: zone, day: ["Sunday"] })
      const midnight = at("2026-03-08T05:00:00Z") // 00:00 EST
      assert.strictEqual(iso(nextOpening(w, midnight)), "2026-03-08T07:00:00.000Z")
      assert.isFalse(isOpen(w, at("2026-03-08T06:59:59.999Z"))) // 01:59:59 EST
      assert.isTrue(isOpen(w, at("2026-03-08T07:00:00Z"))) // 03:00 EDT
      assert.strictEqual(iso(nextClosing(w, at("2026-03-08T07:00:00Z"))), "2026-03-08T07:30:00.000Z")
    })

    it("keeps a repeated fall-back hour open both times: 01:00-02:00 on 2026-11-01 is open for two hours", () => {
      const w = canonicalize({ windows: [window(60, 120)], timezone: zone, day: ["Sunday"] })
      assert.strictEqual(iso(nextOpening(w, at("2026-11-01T04:00:00Z"))), "2026-11-01T05:00:00.000Z")
      assert.isTrue(isOpen(w, at("2026-11-01T05:30:00Z"))) // 01:30 EDT
      assert.isTrue(isOpen(w, at("2026-11-01T06:30:00Z"))) // 01:30 EST
      assert.strictEqual(iso(nextClosing(w, at("2026-11-01T05:00:00Z"))), "2026-11-01T07:00:00.000Z")
    })

    it("closes a window ending inside the gap when the gap starts", () => {
      const w = canonicalize({ windows: [window(0, 150)], timezone: zone, day: ["Sunday"] })
      assert.strictEqual(iso(nextClosing(w, at("2026-03-08T05:00:00Z"))), "2026-03-08T07:00:00.000Z")
    })
  })

  describe("Europe/London", () => {
    const zone = "Europe/London"

    it("rejects 07:30 and accepts 09:30 local on the day British Summer Time starts", () => {
      const w = canonicalize({ windows: [window(540, 1020)], timezone: zone })
      assert.isFalse(isOpen(w, at("2026-03-29T06:30:00Z"))) // 07:30 BST
      assert.isTrue(isOpen(w, at("2026-03-29T08:30:00Z"))) // 09:30 BST
      assert.isFalse(isOpen(w, at("2026-03-28T08:30:00Z"))) // 08:30 GMT, the day before
      assert.strictEqual(iso(nextOpening(w, at("2026-03-29T00:00:00Z"))), "2026-03-29T08:00:00.000Z")
    })

    it("opens 01:30-02:30 at 02:00 BST on 2026-03-29 (01:30 never happens) and closes at 02:30 BST", () => {
      const w = canonicalize({ windows: [window(90, 150)], timezone: zone, day: ["Sunday"] })
      assert.strictEqual(iso(nextOpening(w, at("2026-03-29T00:00:00Z"))), "2026-03-29T01:00:00.000Z")
      assert.strictEqual(iso(nextClosing(w, at("2026-03-29T01:00:00Z"))), "2026-03-29T01:30:00.000Z")
    })

    it("keeps 01:00-02:00 open through both occurrences on 2026-10-25", () => {
      const w = canonicalize({ windows: [window(60, 120)], timezone: zone, day: ["Sunday"] })
      assert.strictEqual(iso(nextOpening(w, at("2026-10-24T23:00:00Z"))), "2026-10-25T00:00:00.000Z")
      assert.isTrue(isOpen(w, at("2026-10-25T00:59:00Z"))) // 01:59 BST
      assert.isTrue(isOpen(w, at("2026-10-25T01:00:00Z"))) // 01:00 GMT
      assert.strictEqual(iso(nextClosing(w, at("2026-10-25T00:00:00Z"))), "2026-10-25T02:00:00.000Z")
    })
  })

  describe("Australia/Lord_Howe (30-minute shifts)", () => {
    const zone = "Australia/Lord_Howe"

    it("skips a window that lies wholly inside the 02:00-02:30 gap on 2026-10-04 to the next Sunday", () => {
      const w = canonicalize({ windows: [window(120, 150)], timezone: zone, day: ["Sunday"] })
      // 2026-10-04 00:00 LHST (+10:30) is 2026-10-03T13:30Z; 2026-10-11 02:00 LHDT (+11:00) is 2026-10-10T15:00Z.
      assert.strictEqual(iso(nextOpening(w, at("2026-10-03T13:30:00Z"))), "2026-10-10T15:00:00.000Z")
    })

    it("opens 02:15-03:00 at 02:30 LHDT, the first instant after the gap", () => {
      const w = canonicalize({ windows: [window(135, 180)], timezone: zone, day: ["Sunday"] })
      assert.strictEqual(iso(nextOpening(w, at("2026-10-03T13:30:00Z"))), "2026-10-03T15:30:00.000Z")
      assert.strictEqual(iso(nextClosing(w, at("2026-10-03T15:30:00Z"))), "2026-10-03T16:00:00.000Z")
    })

    it("keeps the repeated half hour 01:30-02:00 open for an hour on 2026-04-05", () => {
      const w = canonicalize({ windows: [window(90, 120)], timezone: zone, day: ["Sunday"] })
      assert.strictEqual(iso(nextOpening(w, at("2026-04-04T13:00:00Z"))), "2026-04-04T14:30:00.000Z")
      assert.isTrue(isOpen(w, at("2026-04-04T15:15:00Z"))) // 01:45 LHST, the second time
      assert.strictEqual(iso(nextClosing(w, at("2026-04-04T14:30:00Z"))), "2026-04-04T15:30:00.000Z")
    })
  })

  describe("Asia/Tokyo (no DST)", () => {
    it("is a fixed +09:00 all year", () => {
      const w = canonicalize({ windows: [window(540, 1020)], timezone: "Asia/Tokyo", day: ["Monday"] })
      // 2026-03-09 and 2026-11-02 are Mondays; 09:00 JST is 00:00Z.
      for (const day of ["2026-03-09", "2026-07-06", "2026-11-02"]) {
        assert.isTrue(isOpen(w, at(`${day}T00:00:00Z`)))
        assert.isFalse(isOpen(w, at(`${day}T08:00:00Z`)))
        assert.strictEqual(iso(nextClosing(w, at(`${day}T00:00:00Z`))), `${day}T08:00:00.000Z`)
      }
      assert.strictEqual(iso(nextOpening(w, at("2026-03-09T08:00:00Z"))), "2026-03-16T00:00:00.000Z")
    })
  })

  describe("Asia/Kathmandu (+05:45)", () => {
    it("reads the wall clock at a quarter-hour offset", () => {
      const w = canonicalize({ windows: [window(540, 1020)], timezone: "Asia/Kathmandu", day: ["Wednesday"] })
      // 2026-07-01 is a Wednesday; 09:00 NPT is 03:15Z.
      assert.isFalse(isOpen(w, at("2026-07-01T03:14:59.999Z")))
      assert.isTrue(isOpen(w, at("2026-07-01T03:15:00Z")))
      assert.strictEqual(iso(nextOpening(w, at("2026-07-01T00:00:00Z"))), "2026-07-01T03:15:00.000Z")
      assert.strictEqual(iso(nextClosing(w, at("2026-07-01T03:15:00Z"))), "2026-07-01T11:15:00.000Z")
    })
  })

  describe("limits", () => {
    it("never closes a window open all day every day, and runs a 24:00 end into a 00:00 start", () => {
      const always = canonicalize({ windows: [window(0, 720), window(720, 1440)], timezone: "UTC" })
      assert.isTrue(Option.isNone(nextClosing(always, at("2026-01-01T00:00:00Z"))))
      assert.strictEqual(iso(nextOpening(always, at("2026-01-01T10:11:12.345Z"))), "2026-01-01T10:11:12.345Z")
      const weekend = canonicalize({ windows: [window(0, 1440)], timezone: "UTC", day: ["Saturday", "Sunday"] })
      // 2026-01-03 is a Saturday: open from Saturday 00:00 until Monday 00:00.
      assert.strictEqual(iso(nextClosing(weekend, at("2026-01-03T05:00:00Z"))), "2026-01-05T00:00:00.000Z")
    })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Properties, checked against an oracle that knows nothing of the implementation: it asks Intl for the local
// weekday and wall time of every UTC minute, and reads the window as given (not canonicalized).
// ---------------------------------------------------------------------------------------------------------------

const minuteMs = 60_000
const dayMs = 1440 * minuteMs
const zones = Intl.supportedValuesOf("timeZone")
const rangeStart = Date.UTC(2026, 0, 1)
const rangeEnd = Date.UTC(2031, 0, 1)

const oracleFormats = new Map<string, Intl.DateTimeFormat>()
const wallClock = (zone: string, instant: number): { readonly weekday: string; readonly minute: number } => {
  let format = oracleFormats.get(zone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      weekday: "long",
      hour: "2-digit",
      minute: "2-digit"
    })
    oracleFormats.set(zone, format)
  }
  const parts = format.formatToParts(instant)
  const get = (type: string) => parts.find((p) => p.type === type)!.value
  return { weekday: get("weekday"), minute: Number(get("hour")) * 60 + Number(get("minute")) }
}

const oracleIsOpen = (w: CallTimeWindow, instant: number): boolean => {
  const { minute, weekday } = wallClock(w.timezone ?? "America/Los_Angeles", instant)
  const days: ReadonlyArray<string> = w.day ?? []
  return (days.length === 0 || days.includes(weekday)) && w.windows.some((x) => x.start <= minute && minute < x.end)
}

// Every offset in 2026-2030 is a whole number of minutes and changes on a minute, so the open state is constant
// between UTC minute boundaries: after `instant` itself, only the boundaries need checking.
const oracleNext = (w: CallTimeWindow, instant: number, open: boolean, horizon: number): number | undefined => {
  if (oracleIsOpen(w, instant) === open) return instant
  for (let u = Math.ceil(instant / minuteMs) * minuteMs; u <= instant + horizon; u += minuteMs) {
    if (oracleIsOpen(w, u) === open) return u
  }
  return undefined
}

// Offsets of a zone over 2026-2030 sampled daily; where two samples differ, the change is bisected to the minute.
const transitionCache = new Map<string, ReadonlyArray<number>>()
const transitionsOf = (zone: string): ReadonlyArray<number> => {
  const cached = transitionCache.get(zone)
  if (cached !== undefined) return cached
  const format = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" })
  const offset = (t: number) => format.format(t).split("GMT")[1]
  const found: Array<number> = []
  for (let t = rangeStart; t < rangeEnd; t += dayMs) {
    if (offset(t) === offset(t + dayMs)) continue
    let lo = t
    let hi = t + dayMs
    while (hi - lo > minuteMs) {
      const mid = lo + Math.floor((hi - lo) / 2 / minuteMs) * minuteMs
      if (offset(mid) === offset(lo)) lo = mid
      else hi = mid
    }
    found.push(hi)
  }
  transitionCache.set(zone, found)
  return found
}

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const windowsArbitrary = Arbitrary.array(
  Arbitrary.map(
    Arbitrary.all([int(0, 1439), int(1, 720)]),
    ([start, length]) => window(start, Math.min(1440, start + length))
  ),
  { minLength: 1, maxLength: 4 }
)
const daysArbitrary = Arbitrary.array(Arbitrary.schema(Schema.Literals(Weekdays)), { maxLength: 8 })

// Zones whose transitions are unusual: 30-minute and 2-hour shifts, 45-minute offsets, DST suspended for Ramadan,
// southern-hemisphere summers. Drawn often, so the oracle sees them at their transitions every run.
const oddZones = [
  "Australia/Lord_Howe",
  "Antarctica/Troll",
  "Pacific/Chatham",
  "Africa/Casablanca",
  "America/Santiago",
  "Pacific/Auckland",
  "America/Havana",
  "Asia/Gaza",
  "Europe/London",
  "America/New_York"
]

const makeWindow = (
  windows: ReadonlyArray<{ readonly start: number; readonly end: number }>,
  day: ReadonlyArray<Weekday>,
  zoneIndex: number,
  odd = false
): CallTimeWindow => ({
  windows,
  ...(zoneIndex < 0 && !odd
    ? {}
    : { timezone: odd ? oddZones[Math.abs(zoneIndex) % oddZones.length]! : zones[zoneIndex % zones.length]! }),
  ...(day.length === 0 && zoneIndex % 2 === 0 ? {} : { day })
})

describe("CallWindow properties", () => {
  it.prop(
    "canonicalize is idempotent and keeps exactly the same open minutes",
    { windows: windowsArbitrary, day: daysArbitrary, zone: int(-1, 500) },
    ({ day, windows, zone }) => {
      const w = makeWindow(windows, day, zone)
      const c = canonicalize(w)
      assert.deepStrictEqual(canonicalize(c), c)
      assert.isTrue(Exit.isSuccess(Schema.decodeUnknownExit(CanonicalCallTimeWindow)(c)))
      for (let d = 0; d < 7; d++) {
        const name = Weekdays[d]!
        for (let m = 0; m < 1440; m++) {
          const before = (w.day === undefined || w.day.length === 0 || w.day.includes(name)) &&
            w.windows.some((x) => x.start <= m && m < x.end)
          const after = c.day.includes(name) && c.windows.some((x) => x.start <= m && m < x.end)
          if (before !== after) assert.fail(`${name} minute ${m}: ${before} before, ${after} after`)
        }
      }
    },
    { arbitrary: { runs: 150 } }
  )

  it.prop(
    "isOpen, nextOpening and nextClosing agree with a minute-by-minute Intl oracle, across DST transitions",
    {
      windows: windowsArbitrary,
      day: daysArbitrary,
      zone: int(-1, 2000),
      nearTransition: int(0, 3),
      pick: int(0, 1_000_000),
      shift: int(-36 * 60, 36 * 60),
      ms: int(0, 59_999)
    },
    ({ day, ms, nearTransition, pick, shift, windows, zone }) => {
      const base = makeWindow(windows, day, zone, nearTransition === 3)
      const timezone = base.timezone ?? "America/Los_Angeles"
      const transitions = transitionsOf(timezone)
      let instant = rangeStart + (pick / 1_000_000) * (rangeEnd - rangeStart - 8 * dayMs)
      let w = base
      if (nearTransition > 0 && transitions.length > 0) {
        // Aim at a transition of the chosen zone, with a window around its local wall time most of the time.
        const transition = transitions[pick % transitions.length]!
        instant = transition + shift * minuteMs
        if (nearTransition > 1) {
          const local = wallClock(timezone, transition - minuteMs).minute
          const start = Math.min(1439, Math.max(0, local - 45 + (pick % 60)))
          w = { ...base, windows: [...base.windows, window(start, Math.min(1440, start + 1 + (pick % 90)))] }
        }
      }
      instant = Math.floor(instant / minuteMs) * minuteMs + (pick % 3 === 0 ? 0 : ms)
      const c = canonicalize(w)

      assert.strictEqual(isOpen(c, instant), oracleIsOpen(w, instant), "isOpen")
      assert.strictEqual(isOpen(w, instant), oracleIsOpen(w, instant), "isOpen (not canonicalized)")

      const horizon = 8 * dayMs
      const opening = Option.getOrUndefined(nextOpening(c, instant))
      const expectedOpening = oracleNext(w, instant, true, horizon)
      if (expectedOpening === undefined) assert.isTrue(opening === undefined || opening > instant + horizon)
      else assert.strictEqual(opening, expectedOpening, "nextOpening")

      const closing = Option.getOrUndefined(nextClosing(c, instant))
      const expectedClosing = oracleNext(w, instant, false, horizon)
      if (expectedClosing === undefined) assert.isTrue(closing === undefined || closing > instant + horizon)
      else assert.strictEqual(closing, expectedClosing, "nextClosing")

      // Both answers are instants at which the oracle sees the promised state.
      if (opening !== undefined) assert.isTrue(oracleIsOpen(w, opening))
      if (closing !== undefined) assert.isFalse(oracleIsOpen(w, closing))
    },
    { timeout: 60_000, arbitrary: { runs: 200 } }
  )
})

// Found unpinned by mutation testing (tools/mutation, docs/testing.md). Expectations: the canonical form's definition
// (module comment and `CanonicalCallTimeWindow`), `decodeCallTimeWindow`'s contract, and the IANA tz database.
describe("CallWindow edges", () => {
  // The canonical schema's problems, as describeIssue words them ("windows[1] must start after ...").
  const canonicalProblems = (windows: ReadonlyArray<{ start: number; end: number }>, day: ReadonlyArray<string>) => {
    const input = { windows, timezone: "America/New_York", day }
    const exit = Schema.decodeUnknownExit(CanonicalCallTimeWindow)(input, { errors: "all" })
    if (Exit.isSuccess(exit)) return []
    const error = Cause.squash(exit.cause) as Schema.SchemaError
    return describeIssue(error.issue, input, "")
  }

  it("a canonical window has its windows separated (touching ones are merged) and its days once each, in week order", () => {
    assert.deepStrictEqual(canonicalProblems([window(0, 600), window(601, 700)], ["Monday", "Wednesday"]), [])
    for (const windows of [[window(0, 600), window(600, 700)], [window(0, 600), window(300, 700)]]) {
      const problems = canonicalProblems(windows, [...Weekdays])
      assert.strictEqual(problems.length, 1)
      assert.isTrue(problems[0]!.startsWith("windows[1] must start after the previous window ends"), problems[0])
    }
    for (const day of [["Tuesday", "Monday"], ["Monday", "Monday"], ["Monday", "Sunday", "Saturday"]]) {
      const problems = canonicalProblems([window(0, 600)], day)
      assert.strictEqual(problems.length, 1, day.join(","))
      assert.isTrue(problems[0]!.startsWith("day must list each day once, in Monday..Sunday order"), problems[0])
    }
  })

  it.effect("decodes a valid window to itself", () =>
    Effect.gen(function*() {
      const input: CallTimeWindow = { windows: [window(540, 1020)], timezone: "Europe/London", day: ["Monday"] }
      assert.deepStrictEqual(yield* decodeCallTimeWindow(input), input)
    }))

  it.effect("fails, never throws, on a missing or null body, naming the field", () =>
    Effect.gen(function*() {
      for (const input of [null, undefined]) {
        const error = yield* Effect.flip(decodeCallTimeWindow(input))
        assert.strictEqual(error._tag, "InvalidCallWindow")
        assert.isTrue(error.message.startsWith("call_time_window must be an object"), error.message)
      }
    }))

  it.effect("an unknown time zone with another problem is InvalidCallWindow listing both, not UnknownTimeZone", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        decodeCallTimeWindow({ windows: [window(0, 60)], timezone: "Mars/Olympus", day: ["mon"] })
      )
      assert.strictEqual(error._tag, "InvalidCallWindow")
      assert.strictEqual(error._tag === "InvalidCallWindow" ? error.problems.length : 0, 2)
    }))

  it("reads offsets to the second: New York kept local mean time, UTC-4:56:02, until 1883 (tzdata)", () => {
    // 12:00Z on 1880-01-01 is 07:03:58 local; a window at local midnight next opens at 00:00 LMT on 1880-01-02.
    const midnight = { windows: [window(0, 60)], timezone: "America/New_York" }
    assert.strictEqual(iso(nextOpening(midnight, Date.UTC(1880, 0, 1, 12))), "1880-01-02T04:56:02.000Z")
    assert.isTrue(isOpen(midnight, Date.parse("1880-01-02T04:56:02Z")))
    assert.isFalse(isOpen(midnight, Date.parse("1880-01-02T04:56:01Z")))
  })
})

// More edges found unpinned by mutation testing (issue 28 item 1; docs/testing.md). Expectations: decision 0101
// (decode failures are typed, never exceptions, and list every problem as `<field path> <rule> (got <value>)`),
// decision 0104 (values echoed in a message are cut short) and the IANA tz database.
describe("CallWindow messages and offsets", () => {
  it.effect("fails, never throws, on values JSON can not write (a BigInt, a cycle), still naming the field", () =>
    Effect.gen(function*() {
      const cyclic: Record<string, unknown> = {}
      cyclic["self"] = cyclic
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ windows: [{ start: 10n, end: 600 }] }, "windows[0].start"],
        [{ windows: cyclic }, "windows"]
      ]
      for (const [input, field] of cases) {
        const exit = yield* Effect.exit(Effect.suspend(() => decodeCallTimeWindow(input)))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasFails(exit.cause), field)
        const error = yield* Effect.flip(decodeCallTimeWindow(input))
        assert.strictEqual(error._tag, "InvalidCallWindow")
        assert.isTrue(error.message.startsWith(`call_time_window.${field} must be`), error.message)
      }
    }))

  it.effect("echoes a long rejected value cut short: its beginning, and no longer for a longer value", () =>
    Effect.gen(function*() {
      const messageFor = (timezone: string) =>
        Effect.flip(decodeCallTimeWindow({ windows: [window(540, 600)], timezone })).pipe(
          Effect.map((error) => error.message)
        )
      const long = yield* messageFor(`Mars/${"Olympus_Mons".repeat(20)}`)
      const longer = yield* messageFor(`Mars/${"Olympus_Mons".repeat(200)}`)
      assert.include(long, "call_time_window.timezone must be an IANA time zone name")
      assert.include(long, "(got \"Mars/Olympus_MonsOlympus_Mons")
      assert.strictEqual(longer.length, long.length)
      assert.isBelow(long.length, 250)
    }))

  it("names a problem of the whole value with a word, not with nothing, when the root is empty", () => {
    const input = "9-5"
    const exit = Schema.decodeUnknownExit(CallTimeWindow)(input)
    assert.isTrue(Exit.isFailure(exit))
    if (Exit.isFailure(exit)) {
      const error = Cause.squash(exit.cause) as Schema.SchemaError
      const [problem] = describeIssue(error.issue, input, "")
      assert.match(problem!, /^[a-z_]+ must be an object with windows, timezone and day \(got "9-5"\)$/u)
    }
  })

  it.effect("keeps each problem of the message apart, none run into the next", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decodeCallTimeWindow({ windows: [], timezone: "Nowhere/City" }))
      assert.strictEqual(error._tag, "InvalidCallWindow")
      if (error._tag !== "InvalidCallWindow") return
      assert.strictEqual(error.problems.length, 2)
      for (const problem of error.problems) assert.include(error.message, problem)
      assert.notInclude(error.message, `${error.problems[0]}${error.problems[1]}`)
      assert.notInclude(error.message, `${error.problems[1]}${error.problems[0]}`)
    }))

  it("reads an offset change on the last day of a 28-day offset table: Tehran's DST start, 22 March 2018", () => {
    // tzdata (asia, Rule Iran): daylight time began at 00:00 on 22 March 2018 (+03:30 -> +04:30), i.e. at
    // 2018-03-21T20:30Z. 2018-03-22T00:00Z is a multiple of 28 days since 1970, so the change falls on the last
    // day of the table that holds it (decision 0101: offsets are cached per 28 days, sampled daily).
    const earlyThursday = { windows: [window(120, 180)], timezone: "Asia/Tehran", day: ["Thursday" as const] }
    assert.strictEqual((Date.parse("2018-03-22T00:00:00Z") / 86_400_000) % 28, 0)
    // 22:00Z is 02:30 IRDT on Thursday 22 March (it would be 01:30 at the old +03:30)
    assert.isTrue(isOpen(earlyThursday, Date.parse("2018-03-21T22:00:00Z")))
    assert.isFalse(isOpen(earlyThursday, Date.parse("2018-03-21T23:00:00Z"))) // 03:30 IRDT
    // 02:00 IRDT = 21:30Z
    assert.strictEqual(iso(nextOpening(earlyThursday, Date.parse("2018-03-21T20:00:00Z"))), "2018-03-21T21:30:00.000Z")
    assert.strictEqual(iso(nextClosing(earlyThursday, Date.parse("2018-03-21T22:00:00Z"))), "2018-03-21T22:30:00.000Z")
  })
})
