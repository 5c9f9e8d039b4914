/**
 * The linter's own rules, beside the schedule's: problems with the inputs (a file that is not
 * JSON/YAML, a file that could not be read) and with suppressions. Their ids never collide with a
 * schedule rule id and they can be re-levelled or turned `off` in the config file like any rule.
 */
import type { Level } from "./Level.ts"

/** The ids of the linter's own rules. */
export type LinterRuleId =
  | "parse-error"
  | "file-skipped"
  | "suppression-without-reason"
  | "suppression-expired"
  | "suppression-unused"
  | "suppression-invalid"
  | "batch-window-never-legal"
  | "batch-window-seasonal"
  | "batch-call-invalid"

/** Documentation of a linter rule. */
export interface LinterRule {
  readonly id: LinterRuleId
  readonly level: Level
  readonly title: string
  readonly summary: string
  /** Where the rule looks, for `svc-lint explain` (rules about inputs and suppressions look everywhere). */
  readonly checks?: ReadonlyArray<string>
}

export const linterRules: ReadonlyArray<LinterRule> = [
  {
    id: "parse-error",
    level: "error",
    title: "Malformed JSON or YAML",
    summary: "The file has a .json, .yaml or .yml name but is not valid JSON or YAML, so none of its content " +
      "could be checked. The position is where the parser stopped."
  },
  {
    id: "file-skipped",
    level: "warning",
    title: "File not checked",
    summary: "A file was not checked: binary content, larger than --max-file-size, unreadable, a broken " +
      "symbolic link or a symbolic link loop."
  },
  {
    id: "suppression-without-reason",
    level: "error",
    title: "Suppression without a reason",
    summary: "Every suppression must say why, after `--` in an inline comment " +
      "(`svc-lint-disable-next-line RULE -- reason`) or in the `reason` field of a suppressions-file entry. " +
      "The suppression still applies."
  },
  {
    id: "suppression-expired",
    level: "error",
    title: "Suppression of a removed rule",
    summary: "The suppressed rule's removal date has passed: the platform no longer accepts what the " +
      "suppression hides, so it can only hide a failure. Fix the code and delete the suppression."
  },
  {
    id: "suppression-unused",
    level: "warning",
    title: "Suppression that suppresses nothing",
    summary: "A suppression for a rule that is active at the as-of date matched no problem: the code was " +
      "fixed or moved. Delete the suppression."
  },
  {
    id: "suppression-invalid",
    level: "error",
    title: "Malformed suppression",
    summary: "A suppression names an unknown rule, or a suppressions-file entry lacks `rule` or `files`."
  },
  {
    id: "batch-window-never-legal",
    level: "error",
    title: "Batch call window never legal at the called parties",
    summary: "A create-batch-call body whose call_time_window (read in its own time zone; none = any time) never " +
      "holds an instant that is legal for some of its tasks within 366 days of --as-of: legal in every candidate " +
      "time zone of the task's number under the federal rule and the rule of its area-code state (" +
      "the same zones, rules and grouping as create-batch-call and dispatch). Those tasks would wait forever. " +
      "The message names the window, the zones, the rules, the task indexes and, when one rule in one zone alone " +
      "rules the window out, that rule. Widen or move the window, or split the batch by region.",
    checks: [
      "config documents: create-batch-call bodies (from_number + tasks with to_number, or kind: batch-call)"
    ]
  },
  {
    id: "batch-window-seasonal",
    level: "warning",
    title: "Batch call window legal only part of the year",
    summary: "A create-batch-call body whose call_time_window is legal for some of its tasks at some time, but " +
      "has a run of more than a week (8 UTC days or more) within 366 days of --as-of without a single legal " +
      "instant: typically a window that fits only while daylight saving time is (or is not) in effect in one of " +
      "the zones, or a one-day-a-week window that loses a holiday week under a no-holidays state rule. The " +
      "message gives the first such run: from which date the tasks cannot be dialled and when they can again.",
    checks: [
      "config documents: create-batch-call bodies (from_number + tasks with to_number, or kind: batch-call)"
    ]
  },
  {
    id: "batch-call-invalid",
    level: "error",
    title: "Malformed create-batch-call field",
    summary: "A field the legal-hours check reads is malformed, so the API would refuse the body with a 400: a " +
      "task's to_number that is not E.164 (unless the task sets ignore_e164_validation), a task that is not an " +
      "object, an empty tasks list, or a call_time_window that breaks a call-window rule (an unknown time zone, " +
      "a window crossing midnight, a day name other than Monday..Sunday). The message names the field and the " +
      "rule in the API's words; the window is not evaluated until it is valid.",
    checks: [
      "config documents: create-batch-call bodies (from_number + tasks with to_number, or kind: batch-call)"
    ]
  }
]

const byId: ReadonlyMap<string, LinterRule> = new Map(linterRules.map((rule) => [rule.id, rule]))

/** The linter rule with an id, if it is one. */
export const getLinterRule = (id: string): LinterRule | undefined => byId.get(id)

export const isLinterRuleId = (id: string): id is LinterRuleId => byId.has(id)
