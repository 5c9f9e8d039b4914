/**
 * Call windows: when a batch call may dial, as local wall-clock minutes in an IANA time zone on chosen weekdays.
 *
 * The wire shape is the spec's `CallTimeWindow` (`{ windows: [{ start, end }], timezone?, day? }`). Decoding
 * enforces the spec's rules (integers, `0 <= start < end <= 1440`, half-open `[start, end)`, no cross-midnight
 * windows) plus the decisions recorded in `docs/decisions/0101-call-window-dst-semantics.md`: day names are exactly
 * `Monday`..`Sunday`, omitted or empty `day` means every day, the time zone must be a real IANA zone and defaults to
 * `America/Los_Angeles`.
 *
 * `canonicalize` gives the one representation of a window that the API echoes back and the store keeps: time zone
 * filled in, windows sorted and merged when they overlap or touch, every allowed day listed once in week order.
 *
 * `isOpen`, `nextOpening` and `nextClosing` answer questions about an instant (epoch milliseconds) by the wall
 * clock of the window's zone: an instant is inside the window when its local weekday is allowed and its local
 * time of day falls in one of the windows. Local times skipped by a spring-forward gap never occur, so they are
 * never open; local times repeated by a fall-back overlap are open both times they occur.
 *
 * Time zone offsets come from `Intl.DateTimeFormat`, cached per zone as short tables of transitions
 * (`CallWindow/ZoneOffsets.ts`); every question is answered with closed-form arithmetic per local day
 * (`CallWindow/LocalDays.ts`), never by scanning minutes.
 */
import { Effect, Option, Result, Schema, SchemaIssue } from "effect"
import { type Compiled, nextClosedLocal, nextOpenLocal, weekdayOf } from "./CallWindow/LocalDays.ts"
import { dayMs, minuteMs, offsetAt, stretchAt, stretchOffset, zoneFor } from "./CallWindow/ZoneOffsets.ts"

/** A value as it appears in a message: JSON (`String` where JSON has no form), cut short. */
const show = (input: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(input) ?? String(input)
  } catch {
    text = String(input)
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

// ---------------------------------------------------------------------------------------------------------------
// Weekdays
// ---------------------------------------------------------------------------------------------------------------

/**
 * The accepted day names in week order (ISO 8601: the week starts on Monday). The spec does not list the accepted
 * values; the vendor's SDK types are exactly these capitalised English names, so lower-case or abbreviated names are
 * rejected rather than guessed at (a client that sends "mon" learns it at once instead of calling on the wrong days).
 *
 * @category models
 */
export const Weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const

/**
 * One day name of a call window's `day` list.
 *
 * @category schemas
 */
export const Weekday = Schema.Literals(Weekdays).annotate({
  message: `must be one of ${Weekdays.join(", ")} (full English day names, capitalised)`
})

/**
 * @category models
 */
export type Weekday = typeof Weekday.Type

// ---------------------------------------------------------------------------------------------------------------
// Time zones
// ---------------------------------------------------------------------------------------------------------------

/**
 * The zone applied when a call window names none (design decision, `shared/design.md`; the vendor's default).
 *
 * @category models
 */
export const DefaultTimeZone = "America/Los_Angeles"

/**
 * Whether `name` is an IANA time zone that this runtime's time zone database knows (`America/New_York`, `UTC`,
 * `Etc/GMT+5`, links such as `US/Eastern`). Bare UTC offsets such as `+05:00` are not IANA zone names and are
 * rejected even though `Intl` accepts them. Never throws.
 *
 * @category guards
 */
export const isIanaTimeZone = (name: string): boolean => zoneFor(name) !== undefined

/**
 * A string naming an IANA time zone (see {@link isIanaTimeZone}).
 *
 * @category schemas
 */
export const IanaTimeZone = Schema.String.annotate({ message: "must be a string naming an IANA time zone" }).check(
  Schema.makeFilter(
    (name: string) =>
      isIanaTimeZone(name)
        ? undefined
        : `must be an IANA time zone name such as "${DefaultTimeZone}" or "Europe/London" (got ${show(name)})`,
    { expected: "an IANA time zone name" }
  )
)

// ---------------------------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------------------------

const minutesPerDay = 1440

const minuteMessage = "must be an integer number of minutes since local midnight"

// spec: "each {start, end} are integers in minutes since local midnight".
const windowStart = Schema.Number.annotate({ message: minuteMessage }).check(
  Schema.isInt({ message: minuteMessage }),
  Schema.isBetween({ minimum: 0, maximum: minutesPerDay - 1 }, { message: "must be between 0 and 1439" })
).annotateKey({ messageMissingKey: "is required" })

// spec: "end = 1440 (24:00) is valid"; end = 0 could only belong to an empty window.
const windowEnd = Schema.Number.annotate({ message: minuteMessage }).check(
  Schema.isInt({ message: minuteMessage }),
  Schema.isBetween({ minimum: 1, maximum: minutesPerDay }, {
    message: "must be between 1 and 1440 (1440 is 24:00, the end of the day)"
  })
).annotateKey({ messageMissingKey: "is required" })

/**
 * One daily window: the half-open interval `[start, end)` of minutes since local midnight. spec: "start < end must
 * hold; cross-midnight windows are not allowed; end = 1440 (24:00) is valid".
 *
 * @category schemas
 */
export const MinuteWindow = Schema.Struct({
  start: windowStart,
  end: windowEnd
}).annotate({ message: "must be an object {start, end} of minutes since local midnight" }).check(
  Schema.makeFilter((w: { readonly start: number; readonly end: number }) =>
    // spec: "start < end must hold; cross-midnight windows are not allowed".
    w.start < w.end ? undefined : {
      path: ["end"],
      issue: w.start > w.end
        ? "must be greater than start; windows may not cross midnight, split it into " +
          `{start: ${w.start}, end: 1440} and {start: 0, end: ${w.end}} (got start=${w.start}, end=${w.end})`
        : `must be greater than start (got start=${w.start}, end=${w.end})`
    }
  )
)

/**
 * @category models
 */
export type MinuteWindow = typeof MinuteWindow.Type

/**
 * The spec's `CallTimeWindow`, as sent in a create-batch-call request and echoed in a `BatchCall`. Decoding checks
 * every rule and leaves the value as given; {@link canonicalize} fills in the defaults.
 *
 * @category schemas
 */
export const CallTimeWindow = Schema.Struct({
  windows: Schema.Array(MinuteWindow).annotate({ message: "must be an array of {start, end} windows" }).check(
    Schema.isMinLength(1, {
      message: "must contain at least one {start, end} window",
      description: "Daily calling windows, each the half-open interval [start, end) of minutes since local midnight: " +
        "0 <= start < end <= 1440, no window crosses midnight. Overlapping or touching windows are merged."
    })
  ).annotateKey({ messageMissingKey: "is required" }),
  timezone: Schema.optionalKey(IanaTimeZone).annotateKey({
    description: `IANA time zone in which the windows apply; default ${DefaultTimeZone}.`
  }),
  day: Schema.optionalKey(
    Schema.Array(Weekday).annotate({
      message: "must be an array of day names",
      description: "Local weekdays on which calls may be placed, Monday..Sunday; omitted or empty means every day."
    })
  )
}).annotate({
  identifier: "CallTimeWindow",
  message: "must be an object with windows, timezone and day",
  description: "When the calls of a batch may be placed, by the wall clock of one time zone."
})

/**
 * @category models
 */
export type CallTimeWindow = typeof CallTimeWindow.Type

/**
 * A call window in canonical form (the output of {@link canonicalize}): the time zone is present, windows are
 * sorted by start and pairwise separated (overlapping or touching windows are merged), and `day` lists every
 * allowed day exactly once in Monday..Sunday order; "every day" is all seven names, never an empty list.
 *
 * @category schemas
 */
export const CanonicalCallTimeWindow = Schema.Struct({
  windows: Schema.Array(MinuteWindow).check(
    Schema.isMinLength(1, { message: "must contain at least one {start, end} window" }),
    Schema.makeFilter((windows: ReadonlyArray<MinuteWindow>) => {
      for (let i = 1; i < windows.length; i++) {
        if (windows[i]!.start <= windows[i - 1]!.end) {
          return { path: [i], issue: "must start after the previous window ends (canonical windows are merged)" }
        }
      }
      return undefined
    })
  ),
  timezone: IanaTimeZone,
  day: Schema.Array(Weekday).check(
    Schema.isMinLength(1, { message: "must list at least one day (canonical form lists all seven for every day)" }),
    Schema.makeFilter((days: ReadonlyArray<Weekday>) =>
      days.every((d, i) => i === 0 || Weekdays.indexOf(d) > Weekdays.indexOf(days[i - 1]!))
        ? undefined
        : "must list each day once, in Monday..Sunday order"
    )
  )
})

/**
 * @category models
 */
export type CanonicalCallTimeWindow = typeof CanonicalCallTimeWindow.Type

// ---------------------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * A call window that breaks one of the spec's rules. `message` names every offending field and rule, e.g.
 * `call_time_window.windows[0].end must be greater than start (got start=600, end=600)`.
 *
 * @category errors
 */
export class InvalidCallWindow extends Schema.TaggedError<InvalidCallWindow>()("InvalidCallWindow", {
  message: Schema.String,
  problems: Schema.Array(Schema.String)
}) {}

/**
 * A call window whose only problem is a time zone name the time zone database does not know.
 *
 * @category errors
 */
export class UnknownTimeZone extends Schema.TaggedError<UnknownTimeZone>()("UnknownTimeZone", {
  timezone: Schema.String,
  message: Schema.String
}) {}

/**
 * @category errors
 */
export type CallWindowError = InvalidCallWindow | UnknownTimeZone

// ---------------------------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------------------------

// Rule messages read "must be ..."; the rejected value is appended from the input itself, so no issue needs to
// retain it (the parser's `reportInput` would also keep whole objects alive inside errors).
const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): { readonly value: unknown } | undefined => {
  let value = input
  for (const key of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return { value }
}

const renderPath = (root: string, path: ReadonlyArray<PropertyKey>): string => {
  const rendered = path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    root
  )
  return rendered === "" ? "value" : rendered
}

/**
 * One line per problem in a decoding issue, `<path> <rule> (got <value>)`, the path written the way a JSON client
 * spells it (`call_time_window.windows[0].end`) and rooted at `root`. This module's schemas phrase their rules for
 * this form ("must be greater than start"), so a request schema that embeds {@link CallTimeWindow} can describe its
 * own failures with `describeIssue(error.issue, body, "")` and get the same messages.
 *
 * @category encoding
 */
export const describeIssue = (issue: SchemaIssue.Issue, input: unknown, root: string): Array<string> =>
  formatter(issue).issues.map((problem) => {
    // Stryker disable next-line ArrayDeclaration,StringLiteral: equivalent — Effect 4's Standard Schema formatter always gives a path, of property keys only (SchemaIssue.toDefaultIssues), so neither the `[]` nor the "object" test is ever reached
    const path = (problem.path ?? []).map((p) => typeof p === "object" ? p.key : p)
    const given = problem.message.includes("(got ") ? undefined : valueAt(input, path)
    return `${renderPath(root, path)} ${problem.message}${given === undefined ? "" : ` (got ${show(given.value)})`}`
  })

/**
 * Decodes an untrusted call window (e.g. a request body's `call_time_window`), collecting every problem. Fails with
 * {@link UnknownTimeZone} when the time zone is the only problem and with {@link InvalidCallWindow} otherwise; each
 * problem reads `<field path> <rule>`, the path rooted at `field` (default `call_time_window`).
 *
 * @category encoding
 */
export const decodeCallTimeWindow = (
  input: unknown,
  field: string = "call_time_window"
): Effect.Effect<CallTimeWindow, CallWindowError> => {
  const result = decodeUnknown(input)
  if (Result.isSuccess(result)) return Effect.succeed(result.success)
  const problems = describeIssue(result.failure.issue, input, field)
  const timezone = valueAt(input, ["timezone"])?.value
  if (
    problems.length === 1 && typeof timezone === "string" && !isIanaTimeZone(timezone) &&
    // Stryker disable next-line StringLiteral: equivalent — with exactly one problem and a timezone string that is not IANA, that one problem is the timezone's
    problems[0]!.startsWith(`${field}.timezone `)
  ) {
    return Effect.fail(new UnknownTimeZone({ timezone, message: problems[0]! }))
  }
  return Effect.fail(new InvalidCallWindow({ message: problems.join("; "), problems }))
}

const decodeUnknown = Schema.decodeUnknownResult(CallTimeWindow, { errors: "all" })

// ---------------------------------------------------------------------------------------------------------------
// Canonical form
// ---------------------------------------------------------------------------------------------------------------

/**
 * The canonical form of a decoded call window: the time zone filled in (default `America/Los_Angeles`, otherwise
 * kept as given), windows sorted by start with overlapping or touching windows merged (`[540, 600)` and
 * `[600, 660)` become `[540, 660)`: the same minutes are open), and the allowed days de-duplicated in Monday..Sunday
 * order, with an omitted or empty `day` written out as all seven days (like the time zone, the default is made
 * explicit, so a reader of the canonical form needs no rule to interpret it). Windows with the same time zone name
 * that are open at the same local minutes canonicalize to equal values, and `canonicalize` is idempotent.
 *
 * @category constructors
 */
export const canonicalize = (window: CallTimeWindow): CanonicalCallTimeWindow => {
  const sorted = [...window.windows].sort((a, b) => a.start - b.start || a.end - b.end)
  const windows: Array<{ start: number; end: number }> = []
  for (const w of sorted) {
    const last = windows[windows.length - 1]
    // spec: windows are half-open, so [a, b) and [b, c) leave no closed minute between them.
    if (last !== undefined && w.start <= last.end) last.end = Math.max(last.end, w.end)
    else windows.push({ start: w.start, end: w.end })
  }
  const given = window.day ?? []
  // design: omitted or empty `day` means every day.
  const day = given.length === 0 ? [...Weekdays] : Weekdays.filter((d) => given.includes(d))
  return { windows, timezone: window.timezone ?? DefaultTimeZone, day }
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------------------------

const compiled = new WeakMap<CallTimeWindow, Compiled>()

const compile = (window: CallTimeWindow): Compiled => {
  let found = compiled.get(window)
  if (found !== undefined) return found
  const canonical = canonicalize(window)
  const zone = zoneFor(canonical.timezone)
  if (zone === undefined) {
    // Unreachable for decoded windows: the schema rejects unknown zones before a window gets here.
    throw new UnknownTimeZone({
      timezone: canonical.timezone,
      message: `call window time zone ${show(canonical.timezone)} is not an IANA time zone`
    })
  }
  const days = canonical.day.reduce((mask, d) => mask | (1 << Weekdays.indexOf(d)), 0)
  const starts = canonical.windows.map((w) => w.start * minuteMs)
  const ends = canonical.windows.map((w) => w.end * minuteMs)
  found = { zone, days, starts, ends, alwaysOpen: days === 127 && starts[0] === 0 && ends[0] === dayMs }
  compiled.set(window, found)
  return found
}

// Past two weeks of real time every valid window has opened and closed; the bound only guards the loops.
const searchHorizonMs = 16 * dayMs

/**
 * Whether dialing may happen at `instant` (epoch ms): the local weekday in the window's zone is allowed and the
 * local time of day lies in one of the windows. Takes a decoded window, canonical or not (it is canonicalized once
 * and remembered per window object, so windows must not be mutated); `instant` must be a valid `Date` time value.
 *
 * @category combinators
 */
export const isOpen = (window: CallTimeWindow, instant: number): boolean => {
  const c = compile(window)
  const local = instant + offsetAt(c.zone, instant)
  const day = Math.floor(local / dayMs)
  if ((c.days & (1 << weekdayOf(day))) === 0) return false
  const within = local - day * dayMs
  for (let i = 0; i < c.starts.length; i++) {
    if (within < c.starts[i]!) return false
    if (within < c.ends[i]!) return true
  }
  return false
}

/**
 * The first instant `>= instant` at which the window is open: `instant` itself when it is open now. On a
 * spring-forward day a window that starts inside the gap opens at the first instant after the gap. `None` only for
 * a window that never opens (impossible for a decoded window).
 *
 * @category combinators
 */
export const nextOpening = (window: CallTimeWindow, instant: number): Option.Option<number> => {
  const c = compile(window)
  // The offset is constant between transitions, so inside each stretch local time is instant + offset and the
  // answer is plain arithmetic; a stretch that ends first hands over to the next one.
  for (let from = instant; from - instant <= searchHorizonMs;) {
    const end = stretchAt(c.zone, from)
    const offset = stretchOffset
    const local = nextOpenLocal(c, from + offset)
    if (Number.isNaN(local)) return Option.none()
    if (local - offset < end) return Option.some(local - offset)
    from = end
  }
  return Option.none()
}

/**
 * The first instant `>= instant` at which the window is closed: `instant` itself when it is closed now. `None` for
 * a window that is open every minute of every day.
 *
 * @category combinators
 */
export const nextClosing = (window: CallTimeWindow, instant: number): Option.Option<number> => {
  const c = compile(window)
  if (c.alwaysOpen) return Option.none()
  for (let from = instant; from - instant <= searchHorizonMs;) {
    const end = stretchAt(c.zone, from)
    const offset = stretchOffset
    const local = nextClosedLocal(c, from + offset)
    if (Number.isNaN(local)) return Option.none()
    if (local - offset < end) return Option.some(local - offset)
    from = end
  }
  return Option.none()
}
