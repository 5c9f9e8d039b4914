import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { defaultPolicy, type JurisdictionRule, type PolicyOverride } from "../../src/compliance/CallingPolicy.ts"
import {
  decideOverride,
  defaultEffective,
  effectiveOf,
  effectiveOfStored,
  looseningsOf
} from "../../src/compliance/EffectivePolicy.ts"

// An org's effective calling policy (decision 0628: "Per-org override of the policy (stricter always allowed; looser
// only with an explicit, audited admin flag)"). Florida's row in shared/reference/calling-rules.md: 08:00-20:00,
// 3 attempts per 24 hours; the federal row (47 CFR 64.1200(c)(1)): 08:00-21:00.

const fl = defaultPolicy.states.find((r) => r.jurisdiction === "FL")!
/** FL 09:00-19:00, 2 attempts: stricter than the reference's FL row on both counts. */
const flStricter: JurisdictionRule = { ...fl, hours: [{ ...fl.hours[0]!, start: 540, end: 1140 }], attemptsPer24h: 2 }
/** FL until 21:00: an hour later than the reference's 20:00. */
const flLooser: JurisdictionRule = { ...fl, hours: [{ ...fl.hours[0]!, end: 1260 }] }
/** NY, which the reference lists no row for: compared with the federal row; until 20:00 is stricter than 21:00. */
const nyRow: JurisdictionRule = {
  ...defaultPolicy.federal,
  jurisdiction: "NY",
  hours: [{ ...fl.hours[0]!, end: 1200 }]
}
const approval = { approvedBy: "counsel@example.com", reason: "FL statute amended, ticket 42" }
const flOf = (override: PolicyOverride) =>
  Result.map(decideOverride(override), (d) => d.policy.states.find((r) => r.jurisdiction === "FL"))

describe("EffectivePolicy", () => {
  it("decideOverride: stricter rows and a row for a state the policy lacks are accepted, with no loosenings", () => {
    const decided = Result.getOrThrow(decideOverride({ rules: [flStricter, nyRow] }))
    assert.deepStrictEqual(decided.policy.states.find((r) => r.jurisdiction === "FL"), flStricter)
    assert.deepStrictEqual(decided.policy.states.find((r) => r.jurisdiction === "NY"), nyRow)
    assert.deepStrictEqual(decided.policy.federal, defaultPolicy.federal)
    assert.deepStrictEqual(decided.loosenings, [])
    // stored as the override's JSON form, which decodes back to the same effective policy
    assert.deepStrictEqual(effectiveOf(JSON.parse(JSON.stringify(decided.stored)), 1).policy, decided.policy)
  })

  it("decideOverride: a looser row without approval is refused naming the state; with approval it is taken", () => {
    const refused = decideOverride({ rules: [flLooser] })
    assert.isTrue(Result.isFailure(refused))
    const error = Result.isFailure(refused) ? refused.failure : undefined
    assert.strictEqual(error?._tag, "LooserThanPolicy")
    assert.match(error?.message ?? "", /override FL/)
    assert.match(error?.message ?? "", /allowLooser/)
    const approved = Result.getOrThrow(decideOverride({ rules: [flLooser], allowLooser: approval }))
    assert.deepStrictEqual(approved.policy.states.find((r) => r.jurisdiction === "FL"), flLooser)
    // the audit log's lines: one per loosening, each naming the state
    assert.isTrue(approved.loosenings.length > 0)
    assert.isTrue(approved.loosenings.every((line) => line.startsWith("override FL ")))
    assert.deepStrictEqual(approved.loosenings, looseningsOf({ rules: [flLooser] }))
    assert.deepStrictEqual(Result.getOrThrow(flOf({ rules: [flStricter] })), flStricter)
  })

  it("looseningsOf compares a new state's row with the federal row, and a US row with the federal row", () => {
    assert.deepStrictEqual(looseningsOf({ rules: [nyRow] }), [])
    const nyLate: JurisdictionRule = { ...nyRow, hours: [{ ...nyRow.hours[0]!, end: 1320 }] }
    assert.isTrue(looseningsOf({ rules: [nyLate] }).every((line) => line.startsWith("override NY ")))
    assert.isTrue(looseningsOf({ rules: [nyLate] }).length > 0)
    const usLate: JurisdictionRule = {
      ...defaultPolicy.federal,
      hours: [{ ...defaultPolicy.federal.hours[0]!, end: 1320 }]
    }
    assert.isTrue(looseningsOf({ rules: [usLate] }).length > 0)
    assert.deepStrictEqual(looseningsOf({ rules: [defaultPolicy.federal] }), [])
  })

  it("effectiveOf: an unapproved stored override the default has since made looser keeps the default row", () => {
    // stored when FL's default allowed until 21:00 (say); today's default stops at 20:00: the row is not applied
    const effective = effectiveOf({ rules: [flLooser] }, 7)
    assert.strictEqual(effective.version, 7)
    assert.deepStrictEqual(effective.policy.states.find((r) => r.jurisdiction === "FL"), fl)
    // its stricter rows still apply
    const mixed = effectiveOf({ rules: [flLooser, nyRow] }, 7)
    assert.deepStrictEqual(mixed.policy.states.find((r) => r.jurisdiction === "NY"), nyRow)
    // with an approval it is applied as approved
    const approved = effectiveOf({ rules: [flLooser], allowLooser: approval }, 8)
    assert.deepStrictEqual(approved.policy.states.find((r) => r.jurisdiction === "FL"), flLooser)
    assert.deepStrictEqual(approved.override?.allowLooser, approval)
    // two rows for one state, the second looser than the first (each stricter than the default on its own): applied in
    // order, the second loosens the first without approval, so the whole override falls back to the default policy
    const twice = effectiveOf({ rules: [flStricter, fl] }, 4)
    assert.strictEqual(twice.policy, defaultPolicy)
    assert.strictEqual(twice.version, 4)
    assert.strictEqual(twice.override, undefined)
    // what no longer decodes falls back to the default policy, at the stored version
    const broken = effectiveOf({ rules: "nonsense" }, 9)
    assert.strictEqual(broken.policy, defaultPolicy)
    assert.strictEqual(broken.version, 9)
    assert.strictEqual(broken.override, undefined)
  })

  it("effectiveOfStored: no row is the default policy at version 0", () => {
    assert.strictEqual(effectiveOfStored(undefined), defaultEffective)
    assert.strictEqual(defaultEffective.version, 0)
    assert.strictEqual(defaultEffective.policy, defaultPolicy)
    assert.deepStrictEqual(effectiveOfStored({ override: { rules: [flStricter] }, version: 3 }).version, 3)
    assert.deepStrictEqual(
      effectiveOfStored({ override: { rules: [flStricter] }, version: 3 }).policy.states.find((r) =>
        r.jurisdiction === "FL"
      ),
      flStricter
    )
  })
})
