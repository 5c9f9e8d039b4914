/**
 * The linter's own rules, beside the schedule's: problems with the inputs (a file that is not
 * JSON/YAML, a file that could not be read) and with suppressions. Their ids never collide with a
 * schedule rule id and they can be re-levelled or turned `off` in the config file like any rule.
 */
import type { Level } from "../Level.ts"

/** The ids of the linter's own rules. */
export type LinterRuleId =
  | "parse-error"
  | "file-skipped"
  | "suppression-without-reason"
  | "suppression-expired"
  | "suppression-unused"
  | "suppression-invalid"

/** Documentation of a linter rule. */
export interface LinterRule {
  readonly id: LinterRuleId
  readonly level: Level
  readonly title: string
  readonly summary: string
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
  }
]

const byId: ReadonlyMap<string, LinterRule> = new Map(linterRules.map((rule) => [rule.id, rule]))

/** The linter rule with an id, if it is one. */
export const getLinterRule = (id: string): LinterRule | undefined => byId.get(id)

export const isLinterRuleId = (id: string): id is LinterRuleId => byId.has(id)
