/**
 * `svc-lint explain RULE`: one rule's documentation page: what it checks, its dates, its status
 * as of a date, the replacement and whether `--fix` migrates it.
 */
import { classify, nextMilestone } from "@svc/domain/Deprecation/Rule.ts"
import { Console, Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { catalog, fixText, getDoc, markdown } from "../rules/Catalog.ts"
import * as AsOf from "./AsOf.ts"
import { UsageError } from "./Exit.ts"

export const explain = Command.make(
  "explain",
  {
    rule: Argument.String("rule").pipe(Argument.withDescription("A rule id, as `svc-lint rules` lists them")),
    asOf: AsOf.asOfFlag,
    json: Flag.Boolean("json").pipe(Flag.withDescription("Print JSON"), Flag.withDefault(false)),
    markdown: Flag.Boolean("markdown").pipe(Flag.withDescription("Print Markdown"), Flag.withDefault(false))
  },
  Effect.fn("svc-lint.explain")(function*(input) {
    const doc = getDoc(input.rule)
    if (doc === undefined) {
      const close = catalog.filter((d) => d.id.includes(input.rule) || input.rule.includes(d.id)).map((d) => d.id)
      const message =
        `unknown rule "${input.rule}"${close.length > 0 ? ` (did you mean ${close.join(", ")}?)` : ""}; ` +
        "svc-lint rules lists them"
      yield* Console.error(`svc-lint: ${message}`)
      return yield* Effect.fail(new UsageError({ message }))
    }
    const asOf = yield* AsOf.resolve(input.asOf)
    const level = doc.levelAt(asOf.at)
    if (input.json) {
      yield* Console.log(JSON.stringify(
        {
          id: doc.id,
          title: doc.title,
          summary: doc.summary,
          source: doc.source,
          replacement: doc.replacement ?? null,
          asOf: asOf.date,
          level,
          ...(doc.schedule === undefined ? {} : {
            row: doc.schedule.row,
            status: classify(doc.schedule, asOf.at).status,
            milestones: doc.schedule.milestones.map((m) => ({ date: m.date, status: m.status, note: m.note })),
            fixable: doc.schedule.fixable
          }),
          checks: doc.checks
        },
        null,
        2
      ))
      return
    }
    if (input.markdown) {
      yield* Console.log(markdown(doc).trimEnd())
      return
    }
    const lines = [`${doc.id}: ${doc.title}`, "", doc.summary, ""]
    if (doc.schedule !== undefined) {
      const { date, status } = classify(doc.schedule, asOf.at)
      const next = nextMilestone(doc.schedule, asOf.at)
      lines.push(`As of ${asOf.date}: ${status} (${date}), reported as ${level}.`)
      if (next !== undefined) lines.push(`Next: ${next.status} on ${next.date} (${next.note}).`)
      lines.push("", "Dates (00:00 UTC):")
      for (const m of doc.schedule.milestones) lines.push(`  ${m.date}  ${m.status.padEnd(10)}  ${m.note}`)
      lines.push("", `Replacement: ${doc.replacement}`)
      lines.push(`Fix: ${fixText(doc.schedule)}`)
      lines.push(`Spec: deprecation schedule, row ${doc.schedule.row}`)
    } else {
      lines.push(`Reported as ${level} (a rule of the linter itself; re-level or turn off in the config file).`)
    }
    if (doc.checks.length > 0) lines.push("", "Checked in:", ...doc.checks.map((c) => `  - ${c}`))
    yield* Console.log(lines.join("\n"))
  })
).pipe(Command.withDescription("Explain one rule: what it checks, its dates and its replacement"))
