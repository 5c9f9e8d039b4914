import { assert, describe, it } from "@effect/vitest"
import type { CanonicalCallTimeWindow } from "../../src/CallWindow.ts"
import { defaultPolicy } from "../../src/compliance/CallingPolicy.ts"
import { legalHoursOf, type LegalHoursRows } from "../../src/compliance/LegalHoursReport.ts"

// The legal-hours report of a batch's pending tasks (decisions 0623, 0628), explained from the rows the store reads.
// The rules are calling-rules.md's: federal 08:00-21:00 (47 CFR 64.1200(c)(1)), Florida 08:00-20:00.

const at = (iso: string): number => Date.parse(iso)

const NEW_YORK = ["America/New_York"]
const HONOLULU = ["Pacific/Honolulu"]

/** Rows with nothing pending at `instant`, no window and the default policy; `rows` adds what a case needs. */
const rowsAt = (instant: string, rows: Partial<LegalHoursRows> = {}): LegalHoursRows => ({
  at: at(instant),
  window: undefined,
  pending: [],
  waiting: [],
  groups: [],
  policy: undefined,
  ...rows
})

/** Group 0: Miami (New York's zone, US and FL); 1: New York City (US and NY); 2: Honolulu (US and HI). */
const groups = [
  { legal_group: 0, zones: NEW_YORK, rule_ids: ["US", "FL"] },
  { legal_group: 1, zones: NEW_YORK, rule_ids: ["US", "NY"] },
  { legal_group: 2, zones: HONOLULU, rule_ids: ["US", "HI"] }
]

describe("LegalHoursReport", () => {
  it("evaluates each group at the instant: the binding rule, the reason its tasks carry and its next opening", () => {
    // 20:30 EST (01:30Z, Wed 2 Dec): FL closed since 20:00 (opens 13:00Z), federal New York open until 21:00,
    // Honolulu at 15:30 open
    const summary = legalHoursOf(rowsAt("2026-12-02T01:30:00Z", {
      pending: [{ legal_group: 0, n: 2 }, { legal_group: 1, n: 3 }, { legal_group: 2, n: 1 }, {
        legal_group: null,
        n: 4
      }],
      groups
    }))
    assert.deepStrictEqual(summary, {
      policyVersion: 0,
      unconstrained: 4,
      dialableNow: 4,
      heldBack: [{ rule: "FL 08:00-20:00", tasks: 2 }],
      neverWithinHorizon: 0,
      zoneSets: [
        {
          zones: NEW_YORK,
          rules: ["US", "FL"],
          tasks: 2,
          blockedBy: "FL 08:00-20:00",
          stateReason: "legal_hours: FL 08:00-20:00 America/New_York until 2026-12-02T13:00:00Z",
          nextOpening: at("2026-12-02T13:00:00Z")
        },
        {
          zones: NEW_YORK,
          // the default policy has no NY row: the federal rule alone
          rules: ["US"],
          tasks: 3,
          blockedBy: null,
          stateReason: null,
          nextOpening: at("2026-12-02T01:30:00Z")
        },
        {
          zones: HONOLULU,
          rules: ["US"],
          tasks: 1,
          blockedBy: null,
          stateReason: null,
          nextOpening: at("2026-12-02T01:30:00Z")
        }
      ]
    })
  })

  it("lists only groups with pending tasks, and counts no unconstrained task when none is pending", () => {
    const summary = legalHoursOf(rowsAt("2026-12-02T01:30:00Z", {
      pending: [{ legal_group: 2, n: 5 }, { legal_group: 0, n: 0 }],
      groups
    }))
    assert.deepStrictEqual(summary.zoneSets.map((z) => [[...z.zones], z.tasks]), [[HONOLULU, 5]])
    assert.strictEqual(summary.unconstrained, 0)
    assert.strictEqual(summary.dialableNow, 5)
    assert.deepStrictEqual(summary.heldBack, [])
  })

  it("resolves the groups' rules under the org's stored override and reports its version", () => {
    // a NY row 08:00-20:00 holds the New York City tasks back at 20:30 EST too
    const ny = {
      ...defaultPolicy.federal,
      jurisdiction: "NY",
      hours: [{ ...defaultPolicy.federal.hours[0]!, end: 1200 }]
    }
    const summary = legalHoursOf(rowsAt("2026-12-02T01:30:00Z", {
      pending: [{ legal_group: 0, n: 1 }, { legal_group: 1, n: 1 }],
      groups,
      policy: { override: { rules: [ny] }, version: 3 }
    }))
    assert.strictEqual(summary.policyVersion, 3)
    assert.deepStrictEqual(summary.heldBack, [{ rule: "FL 08:00-20:00", tasks: 1 }, {
      rule: "NY 08:00-20:00",
      tasks: 1
    }])
    assert.deepStrictEqual([...summary.zoneSets[1]!.rules], ["US", "NY"])
    assert.strictEqual(summary.dialableNow, 0)
    // an override that no longer decodes falls back to the default policy, under its version
    const stale = legalHoursOf(rowsAt("2026-12-02T01:30:00Z", {
      pending: [{ legal_group: 1, n: 1 }],
      groups,
      policy: { override: { rules: "not rules" }, version: 4 }
    }))
    assert.strictEqual(stale.policyVersion, 4)
    assert.strictEqual(stale.dialableNow, 1)
  })

  it("counts tasks waiting on an attempt cap or a retry's spacing under it, only where legal hours allow them", () => {
    // 10:00 EST: every group open
    const summary = legalHoursOf(rowsAt("2026-12-02T15:00:00Z", {
      pending: [{ legal_group: 0, n: 3 }, { legal_group: 1, n: 2 }, { legal_group: null, n: 2 }],
      waiting: [
        { legal_group: 0, kind: "attempt_cap", n: 2 },
        { legal_group: 1, kind: "retry_spacing", n: 1 },
        { legal_group: null, kind: "retry_spacing", n: 1 },
        // a group with no pending task: never looked at
        { legal_group: 2, kind: "attempt_cap", n: 7 }
      ],
      groups
    }))
    assert.strictEqual(summary.dialableNow, 2)
    assert.strictEqual(summary.unconstrained, 2)
    // two each: by rule
    assert.deepStrictEqual(summary.heldBack, [{ rule: "attempt_cap", tasks: 2 }, { rule: "retry_spacing", tasks: 2 }])
    // the zone sets still count every pending task of their group
    assert.deepStrictEqual(summary.zoneSets.map((z) => z.tasks), [3, 2])
    // at night in Florida, the legal rule holds the capped tasks back, not the cap
    const night = legalHoursOf(rowsAt("2026-12-03T01:30:00Z", {
      pending: [{ legal_group: 0, n: 3 }],
      waiting: [{ legal_group: 0, kind: "attempt_cap", n: 2 }],
      groups
    }))
    assert.deepStrictEqual(night.heldBack, [{ rule: "FL 08:00-20:00", tasks: 3 }])
    assert.strictEqual(night.dialableNow, 0)
  })

  it("orders what is held back by tasks, then by rule", () => {
    const summary = legalHoursOf(rowsAt("2026-12-02T15:00:00Z", {
      pending: [{ legal_group: null, n: 6 }],
      waiting: [
        { legal_group: null, kind: "retry_spacing", n: 1 },
        { legal_group: null, kind: "attempt_cap", n: 1 }
      ]
    }))
    assert.deepStrictEqual(summary.heldBack, [{ rule: "attempt_cap", tasks: 1 }, { rule: "retry_spacing", tasks: 1 }])
    const more = legalHoursOf(rowsAt("2026-12-02T15:00:00Z", {
      pending: [{ legal_group: null, n: 6 }],
      waiting: [
        { legal_group: null, kind: "attempt_cap", n: 1 },
        { legal_group: null, kind: "retry_spacing", n: 2 }
      ]
    }))
    assert.deepStrictEqual(more.heldBack, [{ rule: "retry_spacing", tasks: 2 }, { rule: "attempt_cap", tasks: 1 }])
  })

  it("names the batch's window when it alone blocks, and counts groups with no opening within the horizon", () => {
    // 14:00-15:00 UTC on weekdays: 09:00 in New York (legal), 04:00 in Honolulu (never legal inside the window)
    const window: CanonicalCallTimeWindow = {
      windows: [{ start: 840, end: 900 }],
      timezone: "UTC",
      day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
    }
    // Wednesday 2 Dec, 16:00Z: 11:00 in New York, legal but outside the window; 06:00 in Honolulu
    const summary = legalHoursOf(rowsAt("2026-12-02T16:00:00Z", {
      window,
      pending: [{ legal_group: 1, n: 2 }, { legal_group: 2, n: 3 }],
      groups
    }))
    assert.deepStrictEqual(summary.zoneSets, [
      {
        zones: NEW_YORK,
        rules: ["US"],
        tasks: 2,
        blockedBy: "call_window",
        stateReason: null,
        nextOpening: at("2026-12-03T14:00:00Z")
      },
      {
        zones: HONOLULU,
        rules: ["US"],
        tasks: 3,
        blockedBy: "US 08:00-21:00",
        stateReason: "legal_hours: US 08:00-21:00 Pacific/Honolulu no opening within 14 days",
        nextOpening: null
      }
    ])
    assert.strictEqual(summary.neverWithinHorizon, 3)
    assert.deepStrictEqual(summary.heldBack, [{ rule: "US 08:00-21:00", tasks: 3 }, { rule: "call_window", tasks: 2 }])
    assert.strictEqual(summary.dialableNow, 0)
  })
})
