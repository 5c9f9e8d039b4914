/**
 * Admin subcommands about one batch call (decision 0401, "Operations"), printing JSON on stdout; the logic lives in
 * `@svc/store/DispatchInspect.ts`, this file only wires flags to it.
 *
 * - `batch-status --org ID --batch ID`: tasks per state, calls in flight (batch, org, limit, free slots), whether
 *   the window is open, next opening and closing, and when the scheduler looks at the batch next.
 * - `batch-preview --org ID --batch ID [--at ISO|ms] [--call-seconds N] [--show N]`: when its pending tasks would
 *   be dialled given its window, trigger time and free slots, assuming calls of `--call-seconds` (default 120);
 *   lists the first `--show` tasks (default 20) and how many `do_not_call` numbers are skipped; `legal_hours`
 *   reports how many tasks each legal-hours rule holds back and the next opening per zone set (decision
 *   0623), explained here from the rows the store read (`legalHoursOf`: a compliance decision the store does not
 *   run, dependency rule 3). Dials nothing.
 */
import { legalHoursOf } from "@svc/domain/compliance/LegalHoursReport.ts"
import { Database } from "@svc/store"
import { DispatchInspect, previewReport } from "@svc/store/dispatch/DispatchInspect.ts"
import { Clock, Console, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { batch, org } from "./IdFlags.ts"

const Store = DispatchInspect.layer.pipe(Layer.provide(Database.layer))

const print = <A, E>(effect: Effect.Effect<A, E, DispatchInspect>) =>
  effect.pipe(
    Effect.flatMap((result) => Console.log(JSON.stringify(result, null, 2))),
    Effect.provide(Store)
  )

/** `--at` as epoch ms: an ISO 8601 instant or a number of milliseconds. */
const parseAt = (text: string): number | undefined => {
  const asNumber = Number(text)
  if (text.trim() !== "" && Number.isFinite(asNumber)) return asNumber
  const parsed = Date.parse(text)
  return Number.isNaN(parsed) ? undefined : parsed
}

const batchStatus = Command.make(
  "batch-status",
  { org, batch },
  ({ batch, org }) =>
    print(Effect.gen(function*() {
      const inspect = yield* DispatchInspect
      return yield* inspect.status(org, batch, yield* Clock.currentTimeMillis)
    }))
).pipe(Command.withDescription("A batch's task counts per state, calls in flight and next window opening (JSON)"))

const batchPreview = Command.make(
  "batch-preview",
  {
    org,
    batch,
    at: Flag.String("at").pipe(
      Flag.withDescription("Preview from this instant (ISO 8601 or epoch ms; default now)"),
      Flag.optional
    ),
    callSeconds: Flag.Int("call-seconds").pipe(
      Flag.withDescription("Assumed length of each call in seconds"),
      Flag.withDefault(120)
    ),
    show: Flag.Int("show").pipe(Flag.withDescription("How many tasks to list in dial order"), Flag.withDefault(20))
  },
  ({ at, batch, callSeconds, org, show }) =>
    Effect.gen(function*() {
      const from = Option.isSome(at) ? parseAt(at.value) : yield* Clock.currentTimeMillis
      if (from === undefined) {
        return yield* Effect.fail(
          new Error(`--at must be an ISO 8601 instant or epoch milliseconds (got "${Option.getOrElse(at, () => "")}")`)
        )
      }
      if (callSeconds < 1) return yield* Effect.fail(new Error("--call-seconds must be at least 1"))
      if (show < 0) return yield* Effect.fail(new Error("--show must be 0 or more"))
      return yield* print(Effect.gen(function*() {
        const inspect = yield* DispatchInspect
        const stored = yield* inspect.preview(org, batch, { at: from, callDurationMs: callSeconds * 1000, show })
        return previewReport(stored, legalHoursOf(stored.legal_hours_rows))
      }))
    })
).pipe(Command.withDescription("When a batch's pending tasks would be dialled, without dialling (JSON)"))

export const batchCommands = [batchStatus, batchPreview] as const
