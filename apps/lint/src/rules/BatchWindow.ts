/**
 * Batch definitions whose call window can never be legal at the called parties
 * (decision 0627).
 *
 * A create-batch-call body (JSON/YAML) is grouped exactly as create-batch-call groups it for dispatch
 * (`LegalGrouper`: the candidate zones of each task's `to_number` and the rules of its area-code state under the
 * default policy, decision 0623), so 100,000 tasks cost one evaluation per distinct group. Each group's legal
 * timeline inside the batch's `call_time_window` is then read from the `--as-of` date over `HORIZON_DAYS`
 * (LegalTimeline.ts, on the domain's `nextLegalOpening`):
 *
 * - `batch-window-never-legal` (error): no instant of the horizon is inside the window and legal in every zone of
 *   the group under every rule; the message names the window, the group's zones and rules, the tasks, and the rule
 *   and zone that alone rule it out when there is one;
 * - `batch-window-seasonal` (warning): legal at some time, but with a run of more than a week without a legal
 *   instant (a DST season, a holiday week); the message gives the first such run's dates;
 * - `batch-call-invalid` (error): a field this check reads is malformed (a `to_number` that is not E.164, a
 *   window with an unknown time zone...): the API would refuse the body with a 400, and the message says which field
 *   and which rule, with the same words as the API.
 */
import { CallTimeWindow, canonicalize, describeIssue } from "@svc/domain/CallWindow.ts"
import { defaultPolicy, type JurisdictionRule } from "@svc/domain/compliance/CallingPolicy.ts"
import { type LegalGroup, LegalGrouper, rulesOfIds } from "@svc/domain/compliance/LegalGroups.ts"
import { nextLegalOpening, ruleLabel } from "@svc/domain/compliance/LegalHours.ts"
import { areaCodeStates, type ZoneSet, zonesFor } from "@svc/domain/compliance/RecipientZones.ts"
import { E164Expected, isE164 } from "@svc/domain/models/E164.ts"
import { Option, Result, Schema } from "effect"
import { type Break, DAY_MS, legalTimeline } from "./LegalTimeline.ts"

/** The config-file `kind` that forces a document to be read as a create-batch-call body. */
export const BATCH_CALL_KIND = "batch-call"

/**
 * How far ahead of `--as-of` the window is read: a whole year (a leap year included), so both DST periods of every
 * zone and every federal holiday fall inside it whatever the date.
 */
export const HORIZON_DAYS = 366

/** Malformed tasks reported one by one before the rest are counted in one last problem. */
export const MAX_TASK_PROBLEMS = 100

export type BatchRuleId = "batch-window-never-legal" | "batch-window-seasonal" | "batch-call-invalid"

/** One finding in a create-batch-call body, before positions. */
export interface BatchFinding {
  readonly ruleId: BatchRuleId
  readonly message: string
  readonly path: ReadonlyArray<string | number>
  /** What identifies the finding besides file and document, for its fingerprint (stable when tasks move). */
  readonly key: string
  /** `batch-window-seasonal`: the first UTC date without a legal instant (the as-of date when it starts there). */
  readonly date?: string
}

/**
 * `LegalGrouper` with a memo in front. For a `+1` number, `assign` depends only on `zonesFor(n)` and
 * `areaCodeStates(n)` (`candidatesOf`: the zones, and the area-code states as jurisdictions), and both return shared
 * frozen arrays, so their identities key the memo: one `assign` (and one `rulesFor`) per distinct pair instead of
 * per task, with the groups numbered exactly as create-batch-call numbers them. Other numbers go straight through.
 * The test compares it with a plain `LegalGrouper` over random numbers.
 */
export class TaskGrouper {
  private readonly grouper = new LegalGrouper()
  private readonly memo = new Map<ZoneSet, Map<ReadonlyArray<string>, number | null>>()

  assign(toNumber: string): number | null {
    if (toNumber.charCodeAt(0) !== 43 || toNumber.charCodeAt(1) !== 49) return this.grouper.assign(toNumber)
    const zones = zonesFor(toNumber)
    const states = areaCodeStates(toNumber)
    let byStates = this.memo.get(zones)
    if (byStates === undefined) this.memo.set(zones, byStates = new Map())
    const found = byStates.get(states)
    if (found !== undefined) return found
    const group = this.grouper.assign(toNumber)
    byStates.set(states, group)
    return group
  }

  get groups(): ReadonlyArray<LegalGroup> {
    return this.grouper.groups
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Whether a parsed document is a create-batch-call body: an object with `from_number` and a `tasks` array whose
 * first element is an object with `to_number`. Other config kinds have no `tasks`, so the two never collide.
 */
export const isBatchCallBody = (doc: unknown): boolean => {
  if (!isRecord(doc) || !Object.hasOwn(doc, "from_number") || !Array.isArray(doc.tasks)) return false
  const first: unknown = doc.tasks[0]
  return isRecord(first) && Object.hasOwn(first, "to_number")
}

const show = (u: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(u) ?? String(u)
  } catch {
    // YAML aliases can build a cycle; the value is still reported, only not spelled out
    text = Array.isArray(u) ? "[...]" : typeof u === "object" ? "{...}" : String(u)
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

const clock = (minute: number): string =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`

/** `call_time_window 09:00-12:00, 14:00-20:00 Saturday, Sunday America/New_York`, from the canonical window. */
export const windowLabel = (window: CallTimeWindow | undefined): string => {
  if (window === undefined) return "no call_time_window (any time)"
  const c = canonicalize(window)
  const hours = c.windows.map((w) => `${clock(w.start)}-${clock(w.end)}`).join(", ")
  const days = c.day.length === 7 ? "" : ` ${c.day.join(", ")}`
  return `call_time_window ${hours}${days} ${c.timezone}`
}

/** `task 3`, `tasks 0-41, 57 (43 tasks)`: runs of consecutive indexes, the first eight runs then a count. */
export const taskList = (indexes: ReadonlyArray<number>): string => {
  if (indexes.length === 1) return `task ${indexes[0]}`
  const runs: Array<string> = []
  let more = false
  for (let i = 0; i < indexes.length;) {
    if (runs.length === 8) {
      more = true
      break
    }
    let j = i
    while (j + 1 < indexes.length && indexes[j + 1] === indexes[j]! + 1) j++
    runs.push(j === i ? `${indexes[i]}` : `${indexes[i]}-${indexes[j]}`)
    i = j + 1
  }
  return `tasks ${runs.join(", ")}${more ? ", ..." : ""} (${indexes.length.toLocaleString("en-US")} tasks)`
}

const zoneList = (zones: ReadonlyArray<string>): string =>
  zones.length <= 4 ? zones.join(", ") : `${zones.length} zones: ${zones.slice(0, 3).join(", ")}, ... ${zones.at(-1)}`

/** `call_time_window.windows[0].end` -> `["call_time_window", "windows", 0, "end"]`. */
const parseFieldPath = (rendered: string): Array<string | number> => {
  const out: Array<string | number> = []
  for (const part of rendered.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/u.exec(part)
    if (m === null) return out
    if (m[1] !== "") out.push(m[1]!)
    for (const index of m[2]!.matchAll(/\[(\d+)\]/gu)) out.push(Number(index[1]))
  }
  return out
}

const decodeWindow = Schema.decodeUnknownResult(CallTimeWindow, { errors: "all" })

const breakText = (b: Break, first: boolean, at: number): string => {
  const days = Math.round((b.to - b.from) / DAY_MS)
  const until = b.open
    ? `to the end of the ${HORIZON_DAYS}-day horizon (${isoDate(b.to - DAY_MS)}) at least`
    : `to ${isoDate(b.to - DAY_MS)} (${days} days; legal again on ${isoDate(b.to)})`
  return first && b.from === at
    ? `not legal from the as-of date ${isoDate(at)} ${until}`
    : `legal until ${isoDate(b.from - DAY_MS)}, then no legal instant from ${isoDate(b.from)} ${until}`
}

/**
 * The findings of one create-batch-call body as of `at` (00:00 UTC of the as-of date). Never throws on any input.
 */
export const checkBatchCall = (doc: unknown, at: number): Array<BatchFinding> => {
  const out: Array<BatchFinding> = []
  const invalid = (path: ReadonlyArray<string | number>, message: string) =>
    out.push({ ruleId: "batch-call-invalid", message, path, key: `${path.join(".")}\u0000${message}` })
  if (!isRecord(doc)) {
    invalid([], "a create-batch-call body must be an object with from_number and tasks")
    return out
  }

  let window: CallTimeWindow | undefined
  let windowOk = true
  if (doc.call_time_window !== undefined) {
    const decoded = decodeWindow(doc.call_time_window)
    if (Result.isSuccess(decoded)) window = decoded.success
    else {
      windowOk = false
      for (const problem of describeIssue(decoded.failure.issue, doc.call_time_window, "call_time_window")) {
        invalid(parseFieldPath(problem.slice(0, problem.indexOf(" "))), problem)
      }
    }
  }

  const tasks = doc.tasks
  if (!Array.isArray(tasks) || tasks.length === 0) {
    invalid(["tasks"], `tasks must be a list of at least one task (got ${show(tasks)})`)
    return out
  }
  const grouper = new TaskGrouper()
  const members: Array<Array<number>> = []
  let malformed = 0
  const bad = (path: ReadonlyArray<string | number>, message: string) => {
    malformed++
    if (malformed <= MAX_TASK_PROBLEMS) invalid(path, message)
  }
  for (let i = 0; i < tasks.length; i++) {
    const task: unknown = tasks[i]
    if (!isRecord(task)) {
      bad(["tasks", i], `tasks[${i}] must be an object with to_number (got ${show(task)})`)
      continue
    }
    const to = task.to_number
    if (typeof to !== "string" || to === "") {
      bad(
        ["tasks", i, "to_number"],
        to === undefined
          ? `tasks[${i}].to_number is required`
          : typeof to === "number"
          // YAML reads an unquoted +12125550100 as the integer 12125550100: the API then gets a number.
          ? `tasks[${i}].to_number must be a non-empty string (got the number ${show(to)}; quote it in YAML)`
          : `tasks[${i}].to_number must be a non-empty string (got ${show(to)})`
      )
      continue
    }
    // spec: to_number is E.164; design: ignore_e164_validation relaxes this task's to_number only (BatchCallTask)
    if (task.ignore_e164_validation !== true && !isE164(to)) {
      bad(["tasks", i, "to_number"], `tasks[${i}].to_number must be ${E164Expected} (got ${show(to)})`)
      continue
    }
    const group = grouper.assign(to)
    if (group === null) continue
    ;(members[group] ??= []).push(i)
  }
  if (malformed > MAX_TASK_PROBLEMS) {
    invalid(["tasks"], `${malformed - MAX_TASK_PROBLEMS} more tasks have a malformed to_number (${malformed} in all)`)
  }
  // A window the API would refuse cannot be read; its own problems say why.
  if (!windowOk) return out

  const horizonMs = HORIZON_DAYS * DAY_MS
  const label = windowLabel(window)
  // Whether one rule in one zone alone never meets the window: a full-horizon search when it never does, so it is
  // asked once per (rule, zone) of the document, not once per group (groups share zones and rules).
  const aloneNever = new Map<string, boolean>()
  const neverAlone = (rule: JurisdictionRule, zone: string): boolean => {
    const key = `${rule.jurisdiction}\u0000${zone}`
    let never = aloneNever.get(key)
    if (never === undefined) {
      never = Option.isNone(nextLegalOpening(at, [zone], [rule], window, horizonMs))
      aloneNever.set(key, never)
    }
    return never
  }
  for (const group of grouper.groups) {
    const indexes = members[group.group]!
    const rules = rulesOfIds(defaultPolicy, group.ruleIds)
    const who = `${taskList(indexes)} (zones ${zoneList(group.zones)}; rules ${rules.map(ruleLabel).join(", ")})`
    const path = ["tasks", indexes[0]!, "to_number"]
    const key = `${group.zones.join("&")}\u0000${group.ruleIds.join(",")}`
    const alone: Array<string> = []
    for (const zone of group.zones) {
      for (const rule of rules) if (neverAlone(rule, zone)) alone.push(`${ruleLabel(rule)} in ${zone}`)
    }
    // A pair that alone never meets the window makes the whole group never legal; else ask the group as a whole.
    const timeline = alone.length > 0 ? undefined : legalTimeline(at, horizonMs, group.zones, rules, window)
    if (timeline === undefined || timeline.first === undefined) {
      const why = alone.length > 0
        ? `it never overlaps ${alone.slice(0, 3).join("; ")}${alone.length > 3 ? `; and ${alone.length - 3} more` : ""}`
        : "no instant is legal in all of its zones under all of its rules at once"
      out.push({
        ruleId: "batch-window-never-legal",
        message: `${label} can never be dialled for ${who}: ${why} within ${HORIZON_DAYS} days from ${isoDate(at)}`,
        path,
        key
      })
    } else if (timeline.breaks.length > 0) {
      const [firstBreak, ...more] = timeline.breaks
      const rest = more.length === 0 ? "" : `; ${more.length} more break${more.length === 1 ? "" : "s"} of over a week`
      out.push({
        ruleId: "batch-window-seasonal",
        message: `${label} is legal only part of the time for ${who}: ${breakText(firstBreak!, true, at)}${rest}`,
        path,
        key,
        date: isoDate(firstBreak!.from)
      })
    }
  }
  return out
}
