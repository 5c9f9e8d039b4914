/**
 * `svc-lint rules`: every rule of the spec's deprecation schedule with its status as of a date
 * (default: today, UTC), its dates and its replacement, then the legal-hours rules for batch call
 * definitions (decision 0627), whose level does not move with the date. Text for people, `--json`
 * for tools.
 */
import * as DeprecationRule from "@svc/domain/Deprecation/Rule.ts"
import * as DeprecationSchedule from "@svc/domain/Deprecation/Schedule.ts"
import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { getLinterRule } from "../rules/LinterRules.ts"
import * as AsOf from "./AsOf.ts"

/** The linter's rules about batch call definitions: checked on content, not on a schedule. */
export const batchRuleIds = ["batch-window-never-legal", "batch-window-seasonal", "batch-call-invalid"] as const

/** A batch rule as `svc-lint rules --json` prints it: the schedule rows' keys, with no row and no dates. */
export const describeBatchRule = (id: typeof batchRuleIds[number]) => {
  const rule = getLinterRule(id)!
  return {
    id,
    row: null,
    kind: "batch-call",
    title: rule.title,
    status: "active",
    level: rule.level,
    dates: [],
    replacement: null,
    fixable: false
  }
}

/** One rule as `svc-lint rules --json` prints it. */
export const describe = (rule: DeprecationRule.Rule, at: number) => ({
  id: rule.id,
  row: rule.row,
  kind: rule.kind,
  title: rule.title,
  status: DeprecationRule.statusAt(rule, at),
  dates: rule.milestones.map((m) => ({ date: m.date, status: m.status })),
  replacement: rule.replacement,
  fixable: rule.fixable
})

export const rules = Command.make(
  "rules",
  {
    asOf: AsOf.asOfFlag,
    json: Flag.Boolean("json").pipe(Flag.withDescription("Print JSON"), Flag.withDefault(false))
  },
  Effect.fn("svc-lint.rules")(function*({ asOf, json }) {
    const { at } = yield* AsOf.resolve(asOf)
    const rows = DeprecationSchedule.rules.map((rule) => describe(rule, at))
    const batch = batchRuleIds.map(describeBatchRule)
    if (json) {
      yield* Console.log(JSON.stringify([...rows, ...batch], null, 2))
      return
    }
    const width = Math.max(...rows.map((r) => r.id.length), ...batch.map((r) => r.id.length))
    for (const row of rows) {
      const dates = row.dates.map((d) => `${d.date} ${d.status}`).join(", ")
      yield* Console.log(`${row.id.padEnd(width)}  ${row.status.padEnd(10)}  ${dates}  -> ${row.replacement}`)
    }
    yield* Console.log("\nLegal hours in create-batch-call bodies (any date):")
    for (const row of batch) yield* Console.log(`${row.id.padEnd(width)}  ${row.level.padEnd(10)}  ${row.title}`)
    yield* Console.log("\nsvc-lint explain RULE shows one rule's page; the linter's own rules are listed there too.")
  })
).pipe(Command.withDescription("List the deprecation rules and their status as of a date"))
