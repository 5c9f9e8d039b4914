import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import type { CallTimeWindow } from "../../src/CallWindow.ts"
import { defaultPolicy } from "../../src/compliance/CallingPolicy.ts"
import { previewLegalHours } from "../../src/compliance/LegalHoursPreview.ts"

const at = (iso: string): number => Date.parse(iso)

// One batch with numbers in Hawaii, Arizona, Chicago, New York, Florida and Saskatchewan (issue 15's end-to-end
// cast), previewed at 12:30Z on Tuesday 2026-12-01: 07:30 in New York and Miami, 06:30 in Chicago and Regina,
// 05:30 in Phoenix, 02:30 in Honolulu.
const tasks = [
  { toNumber: "+18085550100" },
  { toNumber: "+16025550100" },
  { toNumber: "+13125550100" },
  { toNumber: "+12125550100" },
  { toNumber: "+12125550101" },
  { toNumber: "+13055550100" },
  { toNumber: "+13065550100" }
]

describe("LegalHoursPreview", () => {
  it("groups tasks by zones and rules and reports the next opening of each group", () => {
    const preview = previewLegalHours(tasks, at("2026-12-01T12:30:00Z"), defaultPolicy)
    assert.strictEqual(preview.total, 7)
    assert.strictEqual(preview.dialableNow, 0)
    assert.strictEqual(preview.groups.length, 6) // the two New York numbers share a group
    const nextOf = (zone: string) =>
      Option.getOrUndefined(preview.groups.find((g) => g.zones.includes(zone))!.nextOpening)
    assert.strictEqual(nextOf("America/New_York"), at("2026-12-01T13:00:00Z"))
    assert.strictEqual(nextOf("America/Chicago"), at("2026-12-01T14:00:00Z"))
    assert.strictEqual(nextOf("America/Regina"), at("2026-12-01T14:00:00Z"))
    assert.strictEqual(nextOf("America/Phoenix"), at("2026-12-01T15:00:00Z"))
    assert.strictEqual(nextOf("Pacific/Honolulu"), at("2026-12-01T18:00:00Z"))
    assert.deepStrictEqual(preview.heldBack, [
      { rule: "US 08:00-21:00", tasks: 6 },
      { rule: "FL 08:00-20:00", tasks: 1 }
    ])
    assert.strictEqual(preview.neverWithinHorizon, 0)
  })

  it("counts dialable tasks, window holds and tasks that can never be dialled", () => {
    const evening: CallTimeWindow = { windows: [{ start: 1200, end: 1320 }], timezone: "America/Los_Angeles" }
    // 20:30 in Los Angeles = 04:30Z: inside the window, past 21:00 everywhere east of California.
    const preview = previewLegalHours(tasks, at("2026-12-02T04:30:00Z"), defaultPolicy, evening)
    assert.strictEqual(preview.dialableNow, 1) // Honolulu, 18:30
    const never = new Set(preview.groups.filter((g) => Option.isNone(g.nextOpening)).map((g) => g.zones[0]))
    // Evenings in Los Angeles (20:00-22:00) are never 08:00-21:00 in New York, Miami, Chicago, Regina or Phoenix.
    assert.sameMembers([...never], ["America/New_York", "America/Chicago", "America/Regina", "America/Phoenix"])
    assert.strictEqual(preview.neverWithinHorizon, 6)
    // 09:30 in New York: the window (10:00-17:00 New York) holds back everyone whose legal hours have begun.
    const morning = previewLegalHours(tasks, at("2026-12-01T14:30:00Z"), defaultPolicy, {
      windows: [{ start: 600, end: 1020 }],
      timezone: "America/New_York"
    })
    assert.deepStrictEqual(morning.heldBack, [
      { rule: "call_window", tasks: 5 },
      { rule: "US 08:00-21:00", tasks: 2 }
    ])
  })

  it("uses the contact's address state and timezone", () => {
    const preview = previewLegalHours(
      [{ toNumber: "+12125550100", contact: { state: "FL" } }, {
        toNumber: "+16245550100",
        contact: { timezone: "America/New_York" }
      }],
      at("2026-12-02T01:30:00Z"), // 20:30 in New York
      defaultPolicy
    )
    assert.deepStrictEqual(preview.heldBack, [{ rule: "FL 08:00-20:00", tasks: 1 }])
    assert.strictEqual(preview.dialableNow, 1)
  })

  // Found unpinned by mutation testing (docs/testing.md). 212 (NY: federal rule only), 203 (CT: 09:00-20:00) and 305
  // (FL: 08:00-20:00) share the zone America/New_York but not their rules (calling-rules.md).
  it("keeps tasks with the same zones and different rules apart, and holds each back by its own rule", () => {
    const preview = previewLegalHours(
      [{ toNumber: "+12035550100" }, { toNumber: "+13055550100" }, { toNumber: "+12125550100" }],
      at("2026-12-02T01:30:00Z"), // 20:30 in New York: CT and FL closed at 20:00, the federal rule open to 21:00
      defaultPolicy
    )
    assert.strictEqual(preview.groups.length, 3)
    assert.sameDeepMembers(preview.groups.map((g) => g.rules.map((r) => r.jurisdiction)), [
      ["US", "CT"],
      ["US", "FL"],
      ["US"]
    ])
    assert.strictEqual(preview.dialableNow, 1)
    assert.sameDeepMembers([...preview.heldBack], [{ rule: "CT 09:00-20:00", tasks: 1 }, {
      rule: "FL 08:00-20:00",
      tasks: 1
    }])
  })

  it("answers the same for the same tasks in any order, rules holding back equally many tasks included", () => {
    // CT (09:00-20:00) and FL (08:00-20:00) are both closed at 20:30 in New York, one task each
    const ct = { toNumber: "+12035550100" }
    const fl = { toNumber: "+13055550100" }
    const instant = at("2026-12-02T01:30:00Z")
    const one = previewLegalHours([ct, fl], instant, defaultPolicy)
    const other = previewLegalHours([fl, ct], instant, defaultPolicy)
    assert.deepStrictEqual(other.heldBack, one.heldBack)
    assert.sameDeepMembers([...one.heldBack], [{ rule: "CT 09:00-20:00", tasks: 1 }, {
      rule: "FL 08:00-20:00",
      tasks: 1
    }])
    // largest first (docs/api.md) still comes before any order among equals
    const more = previewLegalHours([ct, fl, { toNumber: "+13055550101" }], instant, defaultPolicy)
    assert.deepStrictEqual(more.heldBack, [{ rule: "FL 08:00-20:00", tasks: 2 }, { rule: "CT 09:00-20:00", tasks: 1 }])
  })
})
