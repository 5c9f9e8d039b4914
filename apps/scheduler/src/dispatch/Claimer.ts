/**
 * The claim part of a pass (decisions 0401, 0623, 0624): of the due batches, one whose call window is closed moves
 * to the window's next opening and costs nothing until then (Legality.closedUntil); per org, one transaction claims
 * tasks of its open batches within the concurrency limit, shared fairly, under the org's lock (DispatchRepo.claim),
 * only of the legal groups that are legal now and under their attempt caps; each claimed task's dial starts at once.
 */
import * as Legality from "@svc/domain/dispatch/Legality.ts"
import type { BatchCallId, OrgId } from "@svc/domain/models/Ids.ts"
import { DispatchRepo, type DueBatch } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect } from "effect"
import type { SchedulerSettings } from "../runtime/SchedulerConfig.ts"
import * as SchedulerMetrics from "../runtime/SchedulerMetrics.ts"
import type { Dials } from "./Dials.ts"
import type { LegalityCache } from "./LegalityCache.ts"

/** What the claim part of a pass did. */
export interface ClaimReport {
  /** Batches moved to their window's next opening. */
  readonly postponed: number
  readonly claimed: number
  readonly skipped: number
  /** Tasks left pending because their number reached its attempt cap (decision 0624). */
  readonly deferred: number
  readonly completed: number
  /** Whether a batch may have more to claim right now (a claim hit `claimLimit` with the org's slots not all taken). */
  readonly more: boolean
  /** Whether an org's claim lock stayed taken longer than a claim waits for it (look again shortly). */
  readonly busy: boolean
  /** The earliest wake time this part found (a postponed batch's opening, a claim's recheck), if any. */
  readonly nextAt: number | undefined
}

export const make = (settings: SchedulerSettings, legality: LegalityCache, dials: Dials) =>
  Effect.gen(function*() {
    const repo = yield* DispatchRepo

    /** Claims what `due` allows at `now` and starts the dials. */
    const claimDue = (due: ReadonlyArray<DueBatch>, now: number) =>
      Effect.gen(function*() {
        let nextAt = undefined as number | undefined
        const later = (at: number | undefined) => {
          if (at !== undefined && (nextAt === undefined || at < nextAt)) nextAt = at
        }
        const closed: Array<{ batchCallId: BatchCallId; at: number }> = []
        const open = new Map<OrgId, Array<DueBatch>>()
        for (const batch of due) {
          const at = Legality.closedUntil(batch.window, now)
          if (at !== undefined) {
            closed.push({ batchCallId: batch.batchCallId, at })
            later(at)
            continue
          }
          const list = open.get(batch.orgId)
          if (list === undefined) open.set(batch.orgId, [batch])
          else list.push(batch)
        }
        yield* repo.postpone(closed)
        let claimed = 0
        let skipped = 0
        let deferred = 0
        let completed = 0
        let suppressed = 0
        let more = false
        let busy = false
        const openBatches = [...open.values()].flat()
        const legal = yield* legality.legalityOf(openBatches, now)
        for (const [orgId, batches] of open) {
          const result = yield* repo.claim(orgId, batches, {
            owner: settings.workerId,
            now,
            leaseMs: settings.leaseMs,
            maxPerBatch: settings.claimLimit,
            legal
          })
          claimed += result.claimed.length
          skipped += result.skipped
          suppressed += result.suppressed
          deferred += result.deferred
          completed += result.completed.length
          // a batch stopped at the claim limit with slots left: go round at once (not when the slots ran out: that
          // pass would find none, and calls ending wake the loop anyway)
          if (result.more) more = true
          if (result.busy) busy = true
          later(result.rechecksAt)
          yield* dials.start(result.claimed)
        }
        yield* legality.explainBlocked(openBatches, legal)
        yield* SchedulerMetrics.add(SchedulerMetrics.skipped, skipped - suppressed, { reason: "do_not_call" })
        yield* SchedulerMetrics.add(SchedulerMetrics.skipped, suppressed, { reason: "suppressed" })
        return {
          postponed: closed.length,
          claimed,
          skipped,
          deferred,
          completed,
          more,
          busy,
          nextAt
        } satisfies ClaimReport
      })

    return { claimDue }
  })
