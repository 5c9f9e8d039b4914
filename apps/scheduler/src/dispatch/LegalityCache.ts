/**
 * Legal groups per batch (decision 0623): stored at the batch's creation, read once, kept with the
 * rules of the org's policy version they were resolved under; a batch whose org's policy version changed
 * (DueBatch.policyVersion, read with every look) has its groups resolved again (decision 0628). Each pass evaluates
 * each group once (Legality.groupLegality), never its tasks; a blocked group's opening is kept until it comes.
 */
import { attemptCapOf, capLabel } from "@svc/domain/compliance/AttemptCaps.ts"
import { defaultPolicy, type JurisdictionRule } from "@svc/domain/compliance/CallingPolicy.ts"
import { defaultEffective, effectiveOfStored, type EffectivePolicy } from "@svc/domain/compliance/EffectivePolicy.ts"
import { rulesOfIds } from "@svc/domain/compliance/LegalGroups.ts"
import * as Legality from "@svc/domain/dispatch/Legality.ts"
import { type BatchLegality, DispatchRepo, type DueBatch, type GroupCap } from "@svc/store/dispatch/DispatchRepo.ts"
import { Effect } from "effect"

/** Batches whose legal groups are kept in memory (they never change); past it the cache starts again. */
const LEGAL_CACHE_LIMIT = 10_000

/** A legal group as the dispatcher evaluates it: zones and rules resolved once. */
interface Group {
  readonly group: number
  readonly zones: ReadonlyArray<string>
  readonly rules: ReadonlyArray<JurisdictionRule>
  /** The strictest attempt cap of its rules, enforced by the claim (decision 0624); undefined: none. */
  readonly cap: GroupCap | undefined
  /** Between these instants the group is known to be blocked: when it was found blocked, and its next opening. */
  blockedFrom: number
  blockedUntil: number
  /** The pending tasks' `state_reason` while blocked (`legal_hours: <rule> <zone> until <instant>`). */
  blockedReason: string
  /** The reason this worker last wrote on the group's pending tasks (null: cleared); undefined: not yet. */
  written: string | null | undefined
}

export const make = Effect.gen(function*() {
  const repo = yield* DispatchRepo
  const legalGroups = new Map<string, { readonly version: number; readonly groups: ReadonlyArray<Group> }>()
  const orgPolicies = new Map<string, EffectivePolicy>()

  /** Reads the groups of `stale` batches and resolves their rules under their org's policy. */
  const load = (stale: ReadonlyArray<DueBatch>) =>
    Effect.gen(function*() {
      if (legalGroups.size + stale.length > LEGAL_CACHE_LIMIT) legalGroups.clear()
      if (orgPolicies.size > LEGAL_CACHE_LIMIT) orgPolicies.clear()
      // the orgs whose policy this worker does not hold at the batch's version (version 0: the default)
      const orgs = new Set<string>()
      for (const b of stale) {
        if (b.policyVersion === 0) orgPolicies.set(b.orgId, defaultEffective)
        else if (orgPolicies.get(b.orgId)?.version !== b.policyVersion) orgs.add(b.orgId)
      }
      if (orgs.size > 0) {
        const fetched = yield* repo.orgPolicies([...orgs])
        // an org found without a row was cleared meanwhile: the default policy, at the version looked at
        for (const org of orgs) orgPolicies.set(org, effectiveOfStored(fetched.get(org)))
      }
      const ids = stale.map((b) => b.batchCallId)
      const stored = yield* repo.legalGroups(ids)
      const byBatch = new Map<string, Array<Group>>(ids.map((id) => [id, []]))
      const orgOf = new Map(stale.map((b) => [b.batchCallId, b.orgId]))
      for (const g of stored) {
        // the org's policy (decision 0628) decides the rules and so the cap (decision 0624)
        const policy = orgPolicies.get(orgOf.get(g.batchCallId)!)?.policy ?? defaultPolicy
        const rules = rulesOfIds(policy, g.ruleIds)
        const cap = attemptCapOf(rules)
        byBatch.get(g.batchCallId)?.push({
          group: g.group,
          zones: g.zones,
          rules,
          cap: cap === undefined ? undefined : { group: g.group, limit: cap.limit, label: capLabel(cap) },
          blockedFrom: 0,
          blockedUntil: 0,
          blockedReason: "",
          written: undefined
        })
      }
      // labelled with the version looked at: a newer one fetched meanwhile is looked at again next pass
      for (const b of stale) {
        legalGroups.set(b.batchCallId, { version: b.policyVersion, groups: byBatch.get(b.batchCallId) ?? [] })
      }
    })

  /**
   * Which legal groups of each batch may be dialled at `now`: each group evaluated once, never its tasks; a blocked
   * group's next opening (legal hours and the batch's window) is computed once and kept until it comes.
   */
  const legalityOf = (batches: ReadonlyArray<DueBatch>, now: number) =>
    Effect.gen(function*() {
      const stale = batches.filter((b) => legalGroups.get(b.batchCallId)?.version !== b.policyVersion)
      if (stale.length > 0) yield* load(stale)
      const legality = new Map<string, BatchLegality>()
      for (const batch of batches) {
        const legal: Array<number> = []
        const blocked: Array<{ group: number; opensAt: number }> = []
        const caps: Array<GroupCap> = []
        for (const g of legalGroups.get(batch.batchCallId)?.groups ?? []) {
          // a legal group's cap goes to the claim (a blocked group's tasks are not claimed at all)
          if (g.cap !== undefined) caps.push(g.cap)
          if (!Legality.isKnownBlocked(now, g.blockedFrom, g.blockedUntil)) {
            const state = Legality.groupLegality(now, g.zones, g.rules, batch.window)
            if (state._tag === "Legal") {
              legal.push(g.group)
              continue
            }
            g.blockedFrom = now
            g.blockedUntil = state.until
            g.blockedReason = state.reason
          }
          blocked.push({ group: g.group, opensAt: g.blockedUntil })
        }
        legality.set(batch.batchCallId, { legal, blocked, caps })
      }
      return legality
    })

  /**
   * Tells the tasks of each blocked group why they wait (decision 0623: tasks waiting on legal hours show state_reason
   * saying which rule and until when), and clears the reason of groups open again: one statement per group whose
   * state changed since this worker last wrote it. A claimed task's reason is cleared by the claim itself.
   */
  const explainBlocked = (batches: ReadonlyArray<DueBatch>, legality: ReadonlyMap<string, BatchLegality>) =>
    Effect.gen(function*() {
      for (const batch of batches) {
        const state = legality.get(batch.batchCallId)
        if (state === undefined) continue
        const blocked = new Set(state.blocked.map((b) => b.group))
        for (const g of legalGroups.get(batch.batchCallId)?.groups ?? []) {
          const reason = blocked.has(g.group) ? g.blockedReason : null
          if (g.written === reason) continue
          yield* repo.setLegalReason(batch.batchCallId, g.group, reason)
          g.written = reason
        }
      }
    })

  return { legalityOf, explainBlocked }
})

export type LegalityCache = Effect.Success<typeof make>
