/**
 * How many new calls each open batch of one org may start now: the org's concurrency limit shared fairly
 * between its batches, within each batch's own ceiling. Pure arithmetic, used by the claim transaction (which
 * reads the counts under the org's lock) and by the batch preview.
 *
 * The ceiling (decision 0401, spec `reserved_concurrency`): a batch may start a call only while the org's calls in
 * flight stay within `concurrency_limit - reserved_concurrency`, i.e. its own calls never exceed
 * `concurrency_limit - reserved_concurrency - calls in flight that the batch did not trigger`. A batch's
 * reservation is left to *other* calls, so it binds only that batch's claims.
 *
 * Fairness: slots go one at a time to the batch with the fewest calls in flight (its current calls plus those
 * given out so far), ties to the earlier batch in the given order. This is max-min fairness: two batches that
 * both have work split the org's slots evenly whatever their sizes, and a batch that was starved (its calls
 * finished while the other's did not) catches up first. A batch whose ceiling is reached drops out, so a batch
 * with a large reservation cannot hold back one with a small reservation. A batch with a `max_concurrency` drops out
 * once its calls in flight reach it, and its share goes to the others (decision 0549: one campaign cannot starve
 * another).
 */

/** @category models */
export interface AllocationCandidate<Id extends string = string> {
  readonly batchCallId: Id
  readonly reservedConcurrency: number
  /** The batch's own calls in flight now. */
  readonly inFlight: number
  /** The batch's own cap on its calls in flight (create-batch-call `max_concurrency`, decision 0549); none if absent. */
  readonly maxConcurrency?: number | undefined
}

/**
 * New calls per batch (absent = none). `orgInFlight` counts every call of the org in flight, the candidates'
 * included; `maxPerBatch` bounds one claim. Generic in the id so that the grants keep the candidates' brand (the claim's
 * `BatchCallId`).
 *
 * @category constructors
 */
export const allocate = <Id extends string>(
  concurrencyLimit: number,
  orgInFlight: number,
  candidates: ReadonlyArray<AllocationCandidate<Id>>,
  maxPerBatch: number = Number.POSITIVE_INFINITY
): Map<Id, number> => {
  const granted = new Map<Id, number>()
  let total = orgInFlight
  const load = candidates.map((c) => c.inFlight)
  const given = candidates.map(() => 0)
  const open = candidates.map((c) => total < concurrencyLimit - c.reservedConcurrency)
  for (;;) {
    let best = -1
    for (let i = 0; i < candidates.length; i++) {
      if (!open[i]) continue
      const cap = candidates[i]!.maxConcurrency
      if (
        total + 1 > concurrencyLimit - candidates[i]!.reservedConcurrency || given[i]! >= maxPerBatch ||
        (cap !== undefined && load[i]! >= cap)
      ) {
        open[i] = false
        continue
      }
      if (best < 0 || load[i]! < load[best]!) best = i
    }
    if (best < 0) break
    load[best]!++
    given[best]!++
    total++
  }
  for (let i = 0; i < candidates.length; i++) {
    if (given[i]! > 0) granted.set(candidates[i]!.batchCallId, given[i]!)
  }
  return granted
}

/**
 * Free slots for one batch alone: `concurrency_limit - reserved_concurrency - calls in flight of the org`,
 * never below 0.
 *
 * @category constructors
 */
export const freeSlots = (concurrencyLimit: number, reservedConcurrency: number, orgInFlight: number): number =>
  Math.max(0, concurrencyLimit - reservedConcurrency - orgInFlight)
