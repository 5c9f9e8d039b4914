import { assert, describe, it } from "@effect/vitest"
import type { CallTimeWindow } from "../../src/CallWindow.ts"
import { defaultPolicy, type JurisdictionRule, rulesFor } from "../../src/compliance/CallingPolicy.ts"
import { closedUntil, groupLegality, isKnownBlocked, noOpeningRecheckMs } from "../../src/dispatch/Legality.ts"

// Hours from their statutes: federal 08:00-21:00 local (47 CFR 64.1200(c)(1)), Florida 08:00-20:00 local
// (Fla. Stat. 501.616(6)). Miami and the rest of Florida's east coast read New York time: EST (UTC-5) in December.
const florida = rulesFor(defaultPolicy, ["FL"])
const newYork = ["America/New_York"]
const at = (iso: string) => Date.parse(iso)
// 10:00-17:00 New York time, every day
const tenToFive: CallTimeWindow = { windows: [{ start: 600, end: 1020 }], timezone: "America/New_York" }

describe("Legality", () => {
  describe("groupLegality", () => {
    it("a Florida group is legal at 09:00 local on a Wednesday", () => {
      assert.deepStrictEqual(groupLegality(at("2026-12-02T14:00:00Z"), newYork, florida, undefined), { _tag: "Legal" })
    })

    it("at 06:00 local it is blocked until 08:00, naming Florida's rule (decision 0623's reason format)", () => {
      assert.deepStrictEqual(groupLegality(at("2026-12-02T11:00:00Z"), newYork, florida, undefined), {
        _tag: "Blocked",
        until: at("2026-12-02T13:00:00Z"),
        reason: "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-02T13:00:00Z"
      })
    })

    it("at 20:30 local Florida's rule blocks while the federal one would not, until 08:00 the next day", () => {
      assert.deepStrictEqual(groupLegality(at("2026-12-03T01:30:00Z"), newYork, florida, undefined), {
        _tag: "Blocked",
        until: at("2026-12-03T13:00:00Z"),
        reason: "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-03T13:00:00Z"
      })
    })

    it("a blocked group opens when legal hours and the batch's window are both open (0623: together)", () => {
      assert.deepStrictEqual(groupLegality(at("2026-12-02T11:00:00Z"), newYork, florida, tenToFive), {
        _tag: "Blocked",
        until: at("2026-12-02T15:00:00Z"),
        reason: "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-02T15:00:00Z"
      })
    })

    it("a closed window alone does not block a legal group: the window postpones the batch instead", () => {
      assert.deepStrictEqual(groupLegality(at("2026-12-02T14:00:00Z"), newYork, florida, tenToFive), { _tag: "Legal" })
    })

    it("no zones or no rules constrain nothing (0623: numbers outside the modelled rules)", () => {
      assert.deepStrictEqual(groupLegality(at("2026-12-02T08:00:00Z"), [], florida, undefined), { _tag: "Legal" })
      assert.deepStrictEqual(groupLegality(at("2026-12-02T08:00:00Z"), newYork, [], undefined), { _tag: "Legal" })
    })

    it("a group with no opening within 14 days is looked at again a day later (0623)", () => {
      const never: JurisdictionRule = {
        jurisdiction: "XX",
        hours: [],
        noHolidays: false,
        source: "test",
        verified: "yes"
      }
      const now = at("2026-12-02T14:00:00Z")
      const result = groupLegality(now, newYork, [never], undefined)
      assert.strictEqual(noOpeningRecheckMs, 86_400_000)
      assert.strictEqual(result._tag, "Blocked")
      if (result._tag !== "Blocked") return
      assert.strictEqual(result.until, now + 86_400_000)
      assert.match(result.reason, /^legal_hours: XX .*America\/New_York no opening within 14 days$/)
    })
  })

  describe("isKnownBlocked", () => {
    it("holds from the instant the group was found blocked up to, not including, its opening", () => {
      assert.isTrue(isKnownBlocked(100, 100, 200))
      assert.isTrue(isKnownBlocked(199, 100, 200))
      assert.isFalse(isKnownBlocked(200, 100, 200))
      // a clock that went back before the finding looks again
      assert.isFalse(isKnownBlocked(99, 100, 200))
      // never found blocked
      assert.isFalse(isKnownBlocked(100, 0, 0))
    })
  })

  describe("closedUntil", () => {
    it("a batch without a window, or inside it, is not postponed", () => {
      assert.strictEqual(closedUntil(undefined, at("2026-12-02T03:00:00Z")), undefined)
      assert.strictEqual(closedUntil(tenToFive, at("2026-12-02T15:00:00Z")), undefined)
      assert.strictEqual(closedUntil(tenToFive, at("2026-12-02T21:59:59Z")), undefined)
    })

    it("a batch outside its window waits for the next opening (0101: local time, allowed days)", () => {
      assert.strictEqual(closedUntil(tenToFive, at("2026-12-02T11:00:00Z")), at("2026-12-02T15:00:00Z"))
      // the window is half-open: 17:00 local is closed, and it opens again at 10:00 the next day
      assert.strictEqual(closedUntil(tenToFive, at("2026-12-02T22:00:00Z")), at("2026-12-03T15:00:00Z"))
      // Mondays only: on Wednesday 2 December 2026 the next opening is Monday the 7th
      const mondays: CallTimeWindow = { ...tenToFive, day: ["Monday"] }
      assert.strictEqual(closedUntil(mondays, at("2026-12-02T15:00:00Z")), at("2026-12-07T15:00:00Z"))
    })

    it("a window that never opens (no decoded window is one) is looked at again a day later", () => {
      const now = at("2026-12-02T15:00:00Z")
      assert.strictEqual(closedUntil({ windows: [], timezone: "America/New_York" }, now), now + 86_400_000)
    })
  })
})
