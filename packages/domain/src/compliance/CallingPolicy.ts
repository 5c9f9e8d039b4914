/**
 * The calling policy as data (decision 0621): the federal default and one row per state, each row the
 * local hours at the called party per weekday, whether legal holidays are excluded, and a cap of attempts per
 * rolling 24 hours, with the source it was taken from and whether that source was checked against the statute.
 * `defaultPolicy` holds the rows exactly as `shared/reference/calling-rules.md` gives them; where a row is vague
 * the conservative reading is taken and said so in `note` (docs/decisions/0621-legal-hours-policy.md).
 *
 * An organisation may override rows. A stricter (or equal) row is always accepted; a looser one only with an
 * explicit, audited admin approval (`allowLooser`), otherwise `applyOverride` fails naming every looser row and why.
 * "Stricter or equal" means: every local minute of every weekday that the row allows, the base row allows too; it
 * excludes holidays when the base does; its cap is no higher than the base's.
 */
import { Result, Schema } from "effect"
import { Weekday, Weekdays } from "../CallWindow.ts"

const minuteMessage = "must be an integer number of minutes since local midnight"

/**
 * Hours on some weekdays: the half-open interval `[start, end)` of local minutes, as in a call window.
 *
 * @category schemas
 */
export const HoursRow = Schema.Struct({
  days: Schema.Array(Weekday).check(Schema.isMinLength(1, { message: "must list at least one day" })),
  start: Schema.Int.annotate({ message: minuteMessage }).check(
    Schema.isBetween({ minimum: 0, maximum: 1439 }, { message: "must be between 0 and 1439" })
  ),
  end: Schema.Int.annotate({ message: minuteMessage }).check(
    Schema.isBetween({ minimum: 1, maximum: 1440 }, { message: "must be between 1 and 1440" })
  )
}).check(
  Schema.makeFilter((row: { readonly start: number; readonly end: number }) =>
    row.start < row.end ? undefined : {
      path: ["end"],
      issue: `must be greater than start (got start=${row.start}, end=${row.end})`
    }
  )
)

/**
 * @category models
 */
export type HoursRow = typeof HoursRow.Type

/**
 * One jurisdiction's rule. `hours` lists when calls are allowed; a weekday no row names is closed all day.
 * `jurisdiction` is "US" for the federal rule, else a state's postal code.
 *
 * @category schemas
 */
export const JurisdictionRule = Schema.Struct({
  jurisdiction: Schema.String.check(
    Schema.isPattern(/^[A-Z]{2}$/u, { message: "must be US or a two-letter state code such as FL" })
  ),
  hours: Schema.Array(HoursRow).check(
    Schema.isMinLength(1, { message: "must contain at least one hours row (a rule that never allows is a ban)" })
  ),
  noHolidays: Schema.Boolean,
  attemptsPer24h: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }, { message: "must be between 1 and 1000" }))
  ),
  source: Schema.String,
  verified: Schema.Literals(["yes", "partly", "no"]),
  note: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 */
export type JurisdictionRule = typeof JurisdictionRule.Type

/**
 * The whole policy: the federal rule, applied to every NANP-US number, and the state rows.
 *
 * @category schemas
 */
export const CallingPolicy = Schema.Struct({
  federal: JurisdictionRule,
  states: Schema.Array(JurisdictionRule)
})

/**
 * @category models
 */
export type CallingPolicy = typeof CallingPolicy.Type

/**
 * An organisation's override: rows replacing the rows of the same jurisdiction ("US" replaces the federal row) or
 * adding rows for states the policy has none for. `allowLooser` is the explicit admin flag that lets looser rows
 * through; it records who approved it and why, for the audit log (decision 0628: "looser only with an explicit, audited
 * admin flag").
 *
 * @category schemas
 */
export const PolicyOverride = Schema.Struct({
  rules: Schema.Array(JurisdictionRule),
  allowLooser: Schema.optionalKey(Schema.Struct({
    approvedBy: Schema.NonEmptyString,
    reason: Schema.NonEmptyString
  }))
})

/**
 * @category models
 */
export type PolicyOverride = typeof PolicyOverride.Type

/**
 * An override with rows looser than the policy and no admin approval. `problems` has one line per looser rule.
 *
 * @category errors
 */
export class LooserThanPolicy extends Schema.TaggedError<LooserThanPolicy>()("LooserThanPolicy", {
  message: Schema.String,
  problems: Schema.Array(Schema.String)
}) {}

const everyDay: ReadonlyArray<Weekday> = Weekdays
const monSat: ReadonlyArray<Weekday> = Weekdays.slice(0, 6)
const monFri: ReadonlyArray<Weekday> = Weekdays.slice(0, 5)
const hours = (start: number, end: number, days: ReadonlyArray<Weekday> = everyDay): HoursRow => ({
  days,
  start: start * 60,
  end: end * 60
})

const secondary = "secondary tables (calling-rules.md)"

/**
 * The policy of `shared/reference/calling-rules.md`, row for row.
 *
 * @category constructors
 */
export const defaultPolicy: CallingPolicy = {
  federal: {
    jurisdiction: "US",
    hours: [hours(8, 21)],
    noHolidays: false,
    source: "47 CFR 64.1200(c)(1), (c)(2), (d); FCC 24-17",
    verified: "yes"
  },
  states: [
    {
      jurisdiction: "FL",
      hours: [hours(8, 20)],
      noHolidays: false,
      attemptsPer24h: 3,
      source: "Fla. Stat. 501.616(6); 501.059",
      verified: "yes"
    },
    {
      jurisdiction: "OK",
      hours: [hours(8, 20)],
      noHolidays: false,
      attemptsPer24h: 3,
      source: "Oklahoma Telephone Solicitation Act (2022)",
      verified: "yes"
    },
    {
      jurisdiction: "MD",
      hours: [hours(8, 20)],
      noHolidays: false,
      attemptsPer24h: 3,
      source: "Stop the Spam Calls Act (from 2024-01-01)",
      verified: "yes"
    },
    {
      jurisdiction: "CT",
      hours: [hours(9, 20)],
      noHolidays: false,
      source: "PA 23-98",
      verified: "partly",
      note: "secondary tables disagree (9-20 vs 9-21); the stricter is taken"
    },
    { jurisdiction: "WA", hours: [hours(8, 20)], noHolidays: false, source: "RCW 19.158.040", verified: "yes" },
    {
      jurisdiction: "TX",
      hours: [hours(9, 21, monSat), hours(12, 21, ["Sunday"])],
      noHolidays: false,
      source: "Bus. & Com. Code 301.051",
      verified: "yes"
    },
    { jurisdiction: "AL", hours: [hours(8, 20, monSat)], noHolidays: true, source: secondary, verified: "no" },
    { jurisdiction: "LA", hours: [hours(8, 20, monSat)], noHolidays: true, source: secondary, verified: "no" },
    { jurisdiction: "MS", hours: [hours(8, 20, monSat)], noHolidays: false, source: secondary, verified: "no" },
    { jurisdiction: "KY", hours: [hours(10, 21)], noHolidays: false, source: secondary, verified: "no" },
    { jurisdiction: "MI", hours: [hours(9, 21)], noHolidays: false, source: secondary, verified: "no" },
    { jurisdiction: "MN", hours: [hours(9, 21)], noHolidays: false, source: secondary, verified: "no" },
    { jurisdiction: "NV", hours: [hours(9, 20)], noHolidays: false, source: secondary, verified: "no" },
    {
      jurisdiction: "RI",
      hours: [hours(9, 18, monFri)],
      noHolidays: false,
      source: secondary,
      verified: "no",
      note: "weekend rules not confirmed: no weekend calls until they are"
    },
    {
      jurisdiction: "PA",
      hours: [hours(8, 21, monSat)],
      noHolidays: true,
      source: secondary,
      verified: "no",
      note: "federal hours; the Sunday and holiday restrictions are not specified: no calls on either until they are"
    }
  ]
}

/**
 * The rules that apply to one task: the federal rule and the rows of every state it may be in (the area-code
 * states and, when known, the address state: calling-rules.md, "a dialer should satisfy both"). Unknown states add
 * nothing.
 *
 * @category combinators
 */
export const rulesFor = (policy: CallingPolicy, states: Iterable<string>): ReadonlyArray<JurisdictionRule> => {
  const rules = [policy.federal]
  for (const state of states) {
    const code = state.trim().toUpperCase()
    const row = policy.states.find((r) => r.jurisdiction === code)
    if (row !== undefined && !rules.includes(row)) rules.push(row)
  }
  return rules
}

const minutesOf = (rule: JurisdictionRule): Array<Uint8Array> => {
  const days = Weekdays.map(() => new Uint8Array(1440))
  for (const row of rule.hours) {
    for (const day of row.days) days[Weekdays.indexOf(day)]!.fill(1, row.start, row.end)
  }
  return days
}

const clock = (minute: number): string =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`

/**
 * Why `candidate` is looser than `base`: one line per way it allows more; empty when it is stricter or equal.
 *
 * @category combinators
 */
export const loosenings = (candidate: JurisdictionRule, base: JurisdictionRule): Array<string> => {
  const problems: Array<string> = []
  const mine = minutesOf(candidate)
  const theirs = minutesOf(base)
  for (let d = 0; d < 7; d++) {
    for (let m = 0; m < 1440; m++) {
      if (mine[d]![m] === 1 && theirs[d]![m] === 0) {
        let end = m
        while (end < 1440 && mine[d]![end] === 1 && theirs[d]![end] === 0) end++
        problems.push(`allows ${Weekdays[d]} ${clock(m)}-${clock(end)}, which ${base.jurisdiction} forbids`)
        m = end
      }
    }
  }
  if (base.noHolidays && !candidate.noHolidays) {
    problems.push(`allows legal holidays, which ${base.jurisdiction} forbids`)
  }
  if (
    base.attemptsPer24h !== undefined &&
    (candidate.attemptsPer24h === undefined || candidate.attemptsPer24h > base.attemptsPer24h)
  ) {
    problems.push(
      `allows ${candidate.attemptsPer24h ?? "unlimited"} attempts per 24 h, ${base.jurisdiction} at most ` +
        `${base.attemptsPer24h}`
    )
  }
  return problems
}

/**
 * Whether `candidate` allows nothing that `base` forbids.
 *
 * @category guards
 */
export const isStricterOrEqual = (candidate: JurisdictionRule, base: JurisdictionRule): boolean =>
  loosenings(candidate, base).length === 0

/**
 * The policy with an organisation's override applied. Each override row is compared with the row it replaces (a
 * row for a state the policy does not list is compared with the federal row, which applies anyway). Looser rows
 * fail with {@link LooserThanPolicy} unless the override carries `allowLooser`.
 *
 * @category combinators
 */
export const applyOverride = (
  policy: CallingPolicy,
  override: PolicyOverride
): Result.Result<CallingPolicy, LooserThanPolicy> => {
  const problems: Array<string> = []
  let federal = policy.federal
  const states = [...policy.states]
  for (const row of override.rules) {
    const index = states.findIndex((r) => r.jurisdiction === row.jurisdiction)
    const base = row.jurisdiction === "US" ? policy.federal : index >= 0 ? states[index]! : policy.federal
    for (const problem of loosenings(row, base)) problems.push(`override ${row.jurisdiction} ${problem}`)
    if (row.jurisdiction === "US") federal = row
    else if (index >= 0) states[index] = row
    else states.push(row)
  }
  if (problems.length > 0 && override.allowLooser === undefined) {
    return Result.fail(
      new LooserThanPolicy({
        message: `override is looser than the calling policy and has no admin approval (allowLooser): ${
          problems.join("; ")
        }`,
        problems
      })
    )
  }
  return Result.succeed({ federal, states })
}
