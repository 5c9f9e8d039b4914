/**
 * `svc-lint timeline [paths...]`: for the given inputs, what breaks on which future date. Every
 * schedule finding in the inputs is grouped by the rule's milestones after the as-of date (a
 * deprecation that becomes a removal appears on both dates), with counts and files. A batch call
 * window that stops being legal after the as-of date (`batch-window-seasonal`, decision 0627)
 * appears on that date as "not legal".
 */
import { classify, type RuleId } from "@svc/domain/Deprecation/Rule.ts"
import { getRule, isRuleId } from "@svc/domain/Deprecation/Schedule.ts"
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { plural } from "../reporters/Report.ts"
import { lintAll } from "../rules/Linter.ts"
import * as AsOf from "./AsOf.ts"
import { prepare } from "./check.ts"

interface Step {
  readonly date: string
  readonly ruleId: RuleId | "batch-window-seasonal"
  readonly status: "deprecated" | "removed" | "not legal"
  readonly note: string
  findings: number
  readonly files: Array<string>
}

export const timeline = Command.make(
  "timeline",
  {
    paths: Argument.String("paths").pipe(
      Argument.withDescription("Files, folders or globs (default: the current folder)"),
      Argument.variadic()
    ),
    asOf: AsOf.asOfFlag,
    ignore: Flag.String("ignore").pipe(Flag.withDescription("Glob of paths to skip (repeatable)"), Flag.atLeast(0)),
    ext: Flag.String("ext").pipe(Flag.withDescription("Another source extension (repeatable)"), Flag.atLeast(0)),
    allowEmpty: Flag.Boolean("allow-empty").pipe(Flag.withDefault(false)),
    config: Flag.String("config").pipe(Flag.withDescription("Config file"), Flag.optional),
    json: Flag.Boolean("json").pipe(Flag.withDescription("Print JSON"), Flag.withDefault(false))
  },
  Effect.fn("svc-lint.timeline")(function*(input) {
    const setup = yield* prepare({
      ...input,
      upcomingDays: Option.none(),
      suppressions: Option.none(),
      maxFileSize: 20
    })
    // Every finding, however far its date: the timeline is about the future.
    const run = lintAll(
      { ...setup.ctx, upcomingUntil: Number.POSITIVE_INFINITY, inlineSuppressions: false },
      setup.found.files
    )
    const steps = new Map<string, Step>()
    for (const p of run.problems) {
      if (p.ruleId === "batch-window-seasonal" && p.date !== undefined && p.date > setup.asOf.date) {
        const key = `${p.date}\u0000${p.ruleId}\u0000not legal`
        let step = steps.get(key)
        if (step === undefined) {
          step = {
            date: p.date,
            ruleId: p.ruleId,
            status: "not legal",
            note: "a batch call window stops being legal for some of its tasks",
            findings: 0,
            files: []
          }
          steps.set(key, step)
        }
        step.findings++
        if (!step.files.includes(p.file)) step.files.push(p.file)
      }
      if (!isRuleId(p.ruleId)) continue
      const rule = getRule(p.ruleId)
      for (const m of rule.milestones) {
        if (m.at <= setup.asOf.at) continue
        const key = `${m.date}\u0000${rule.id}\u0000${m.status}`
        let step = steps.get(key)
        if (step === undefined) {
          step = { date: m.date, ruleId: rule.id, status: m.status, note: m.note, findings: 0, files: [] }
          steps.set(key, step)
        }
        step.findings++
        if (!step.files.includes(p.file)) step.files.push(p.file)
      }
    }
    const ordered = [...steps.values()].sort((a, b) =>
      a.date < b.date ? -1 : a.date > b.date ? 1 : a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0
    )
    for (const step of ordered) step.files.sort()
    if (input.json) {
      yield* Console.log(JSON.stringify({ asOf: setup.asOf.date, files: run.files, steps: ordered }, null, 2))
      return
    }
    const now = run.problems.filter((p) =>
      isRuleId(p.ruleId) && classify(getRule(p.ruleId), setup.asOf.at).status !== "upcoming"
    )
    const lines = [
      `As of ${setup.asOf.date}: ${plural(now.length, "finding")} already in effect in ${plural(run.files, "file")} ` +
      "(run svc-lint for them)."
    ]
    if (ordered.length === 0) lines.push("Nothing in these inputs changes status after that date.")
    else {
      lines.push("", "What changes after that date:", "")
      const width = Math.max(...ordered.map((s) => s.ruleId.length))
      for (const step of ordered) {
        lines.push(
          `${step.date}  ${step.status.padEnd(10)}  ${step.ruleId.padEnd(width)}  ` +
            `${plural(step.findings, "finding")} in ${plural(step.files.length, "file")}`
        )
        const shown = step.files.slice(0, 5)
        lines.push(
          `            ${shown.join(", ")}${
            step.files.length > shown.length ? `, and ${step.files.length - shown.length} more` : ""
          }`
        )
      }
    }
    yield* Console.log(lines.join("\n"))
  })
).pipe(Command.withDescription("Show what breaks on which future date for the given inputs"))
