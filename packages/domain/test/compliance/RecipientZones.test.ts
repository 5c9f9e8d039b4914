import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { isIanaTimeZone } from "../../src/CallWindow.ts"
import * as World from "../../src/compliance/generated/CountryPrefixes.ts"
import * as Nanp from "../../src/compliance/generated/NanpPrefixes.ts"
import { areaCodeStates, fallbackZones, resolve, zonesFor, zonesOfState } from "../../src/compliance/RecipientZones.ts"

describe("RecipientZones", () => {
  describe("zonesFor, by number", () => {
    const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
      ["Hawaii", "+18085550100", ["Pacific/Honolulu"]],
      ["Arizona (no DST)", "+16025550100", ["America/Phoenix"]],
      ["Chicago", "+13125550100", ["America/Chicago"]],
      ["New York", "+12125550100", ["America/New_York"]],
      ["Florida (Miami)", "+13055550100", ["America/New_York"]],
      ["Saskatchewan (no DST)", "+13065550100", ["America/Regina"]],
      ["Ontario", "+19055550100", ["America/Toronto"]],
      ["Puerto Rico", "+17875550100", ["America/Puerto_Rico"]],
      ["London", "+442079460000", ["Europe/London"]]
    ]
    for (const [name, number, zones] of cases) {
      it(`resolves a ${name} number to ${zones.join(", ")}`, () => {
        assert.deepStrictEqual(zonesFor(number), zones)
      })
    }

    it("uses area code + exchange where the data has it (850: FL panhandle, 208: Idaho)", () => {
      assert.deepStrictEqual(zonesFor("+18502305555"), ["America/Chicago"])
      assert.deepStrictEqual(zonesFor("+18505550100"), ["America/New_York"])
      assert.deepStrictEqual(zonesFor("+12082015555"), ["America/Denver"])
      // An exchange without its own row falls back to the area code's candidates: both zones of Idaho.
      assert.deepStrictEqual(zonesFor("+12085550100"), ["America/Boise", "America/Los_Angeles"])
    })

    it("keeps the data's known quirks visible: 474 is Winnipeg (DST) while 306 is Regina", () => {
      assert.deepStrictEqual(zonesFor("+14745550100"), ["America/Winnipeg"])
      assert.deepStrictEqual(areaCodeStates("+14745550100"), ["SK"])
    })

    it("gives the 624 and 729 gaps every US and Canadian zone, Hawaii, Alaska and Guam included", () => {
      for (const number of ["+16245550100", "+17295550100"]) {
        const { source, zones } = resolve(number)
        assert.strictEqual(source, "nanp_country")
        assert.strictEqual(zones, fallbackZones.usOrCa)
        for (const zone of ["Pacific/Honolulu", "America/Anchorage", "Pacific/Guam", "America/St_Johns"]) {
          assert.include(zones, zone)
        }
      }
    })

    it("covers every zone of the US and of Canada in the fallback sets", () => {
      for (const zone of fallbackZones.us) assert.include(fallbackZones.usOrCa, zone)
      for (const zone of fallbackZones.ca) assert.include(fallbackZones.usOrCa, zone)
      assert.include(fallbackZones.us, "America/Phoenix")
      assert.include(fallbackZones.ca, "America/Regina")
    })

    it("gives other countries the zones of their prefixes (Russia by region)", () => {
      assert.deepStrictEqual(zonesFor("+79161234567"), ["Europe/Moscow"])
      assert.strictEqual(resolve("+79161234567").source, "prefix")
    })

    it("gives no zones to a string that is not E.164 or a country the data does not know", () => {
      for (const bad of ["", "+", "14155550123", "+1x4155550123", "+99999999", "abc"]) {
        assert.deepStrictEqual(zonesFor(bad), [], bad)
      }
      assert.strictEqual(resolve("+99999999").source, "unknown")
    })

    it("returns shared frozen sets (no allocation per call)", () => {
      const a = zonesFor("+12125550100")
      assert.strictEqual(a, zonesFor("+12125550199"))
      assert.isTrue(Object.isFrozen(a))
      assert.strictEqual(zonesFor("+16245550100"), zonesFor("+17295550100"))
    })
  })

  describe("zonesFor, with the contact's fields", () => {
    it("narrows to the contact's timezone when it is a candidate", () => {
      assert.deepStrictEqual(zonesFor("+16245550100", { timezone: "America/Chicago" }), ["America/Chicago"])
      assert.deepStrictEqual(zonesFor("+12085550100", { timezone: "America/Boise" }), ["America/Boise"])
    })

    it("adds the contact's timezone when it is not a candidate (both places must be legal)", () => {
      assert.deepStrictEqual(zonesFor("+12125550100", { timezone: "Europe/London" }), [
        "America/New_York",
        "Europe/London"
      ])
    })

    it("ignores a timezone that is not an IANA zone, and blank fields", () => {
      assert.deepStrictEqual(zonesFor("+12125550100", { timezone: "Mars/Olympus" }), ["America/New_York"])
      assert.deepStrictEqual(zonesFor("+12125550100", { timezone: " ", state: "" }), ["America/New_York"])
      assert.deepStrictEqual(zonesFor("+12125550100", { state: "ZZ", zip: "10001" }), ["America/New_York"])
    })

    it("narrows by state when some candidates lie in it, and widens when none do", () => {
      assert.deepStrictEqual(zonesFor("+16245550100", { state: "az" }), ["America/Denver", "America/Phoenix"])
      assert.deepStrictEqual(zonesFor("+12125550100", { state: "CA" }), ["America/Los_Angeles", "America/New_York"])
      assert.deepStrictEqual(zonesFor("+18502305555", { state: "FL" }), ["America/Chicago"])
    })

    it("lets the timezone win over the state", () => {
      assert.deepStrictEqual(zonesFor("+16245550100", { timezone: "America/Regina", state: "TX" }), [
        "America/Regina"
      ])
    })

    it("shares the combined result between contacts with the same fields", () => {
      const a = zonesFor("+12125550100", { state: "CA" })
      assert.strictEqual(a, zonesFor("+12125550111", { state: "ca" }))
      assert.isTrue(Object.isFrozen(a))
    })
  })

  describe("areaCodeStates and zonesOfState", () => {
    it("reads the area-code state from the geocoding data", () => {
      assert.deepStrictEqual(areaCodeStates("+13055550100"), ["FL"])
      assert.deepStrictEqual(areaCodeStates("+14055550100"), ["OK"])
      assert.deepStrictEqual(areaCodeStates("+14105550100"), ["MD"])
      assert.deepStrictEqual(areaCodeStates("+16245550100"), [])
      assert.deepStrictEqual(areaCodeStates("+442079460000"), [])
      assert.deepStrictEqual(areaCodeStates("+1-23"), [])
    })

    it("derives each state's zones from its area codes", () => {
      assert.deepStrictEqual(zonesOfState("FL"), ["America/Chicago", "America/New_York"])
      assert.deepStrictEqual(zonesOfState("tx"), ["America/Chicago", "America/Denver"])
      assert.strictEqual(zonesOfState("ZZ"), undefined)
    })
  })
})

// Edges that mutation testing (tools/mutation, docs/testing.md) found unpinned. The expectations are the module's
// rules (decision 0620): E.164 is "+" and digits, the area code is the three digits after "+1", a number whose area
// code is not there at all gets both countries' zones, and every zone set is sorted, frozen and shared.
describe("RecipientZones edges", () => {
  it("gives a +1 string too short to hold an area code both countries' zones, as an unknown area code", () => {
    for (const short of ["+1", "+12", "+121"]) {
      // each after a full number, whose area code (Chicago's 312) must not be read for the short one
      assert.strictEqual(resolve("+13125550100").source, "prefix")
      const { source, zones } = resolve(short)
      assert.strictEqual(source, "nanp_country", short)
      assert.strictEqual(zones, fallbackZones.usOrCa, short)
    }
    // three digits are an area code: 212 is New York's
    assert.deepStrictEqual(resolve("+1212"), { zones: ["America/New_York"], source: "prefix" })
  })

  it("refuses a non-digit anywhere in the prefix it reads, NANP or not, and says the source is unknown", () => {
    for (const bad of ["+1-2125550100", "+12x25550100", "+7x9161234567", "+7-9161234567", "+4a2079460000", ""]) {
      assert.deepStrictEqual(resolve(bad), { zones: [], source: "unknown" }, bad)
    }
  })

  it("reads the contact's fields with surrounding blanks, as stored", () => {
    assert.deepStrictEqual(zonesFor("+16245550100", { timezone: " America/Chicago " }), ["America/Chicago"])
    assert.deepStrictEqual(zonesFor("+13125550100", { state: " ca " }), ["America/Chicago", "America/Los_Angeles"])
    assert.deepStrictEqual(zonesOfState(" fl "), ["America/Chicago", "America/New_York"])
  })

  it("keeps a widened set sorted (the added timezone may sort before the number's zones)", () => {
    assert.deepStrictEqual(zonesFor("+12125550100", { timezone: "America/Chicago" }), [
      "America/Chicago",
      "America/New_York"
    ])
  })

  it("answers each (number's set, contact fields) pair on its own, and shares the answer for an equal pair", () => {
    // Two numbers with other zone sets and the same state, then the same number with two states: four answers.
    const newYorkWa = zonesFor("+12125550100", { state: "WA" })
    const chicagoWa = zonesFor("+13125550100", { state: "WA" })
    const chicagoNy = zonesFor("+13125550100", { state: "NY" })
    assert.deepStrictEqual(newYorkWa, ["America/Los_Angeles", "America/New_York"])
    assert.deepStrictEqual(chicagoWa, ["America/Chicago", "America/Los_Angeles"])
    assert.deepStrictEqual(chicagoNy, ["America/Chicago", "America/New_York"])
    assert.strictEqual(zonesFor("+13125550199", { state: "wa" }), chicagoWa)
    const phoenixLondon = zonesFor("+16025550100", { timezone: "Europe/London" })
    assert.strictEqual(zonesFor("+16025550111", { timezone: "Europe/London" }), phoenixLondon)
  })

  it("says an exchange-level match (area code + exchange) comes from a prefix of the data too", () => {
    // 850-230 is in the FL panhandle's Central part (calling-rules.md: the FL panhandle is a split area code)
    assert.deepStrictEqual(resolve("+18502305555"), { zones: ["America/Chicago"], source: "prefix" })
  })

  it("applies the contact's fields in resolve too, and names the number's own source", () => {
    assert.deepStrictEqual(resolve("+12125550100", { timezone: "Europe/London" }), {
      zones: ["America/New_York", "Europe/London"],
      source: "prefix"
    })
  })

  it("reads the area-code state of a NANP number only: +1, then three digits", () => {
    assert.deepStrictEqual(areaCodeStates("+1305"), ["FL"])
    assert.deepStrictEqual(areaCodeStates("+19055550100"), ["ON"])
    for (const bad of ["+130", "013055550100", "+23055550100", "+1a055550100", "+13a55550100"]) {
      assert.deepStrictEqual(areaCodeStates(bad), [], bad)
    }
  })
})

// An oracle that reads the generated tables naively: every prefix compared as a string, the longest one wins.
const tableOf = (prefixes: string, zoneSets: string): Array<readonly [string, ReadonlyArray<string>]> => {
  const sets = zoneSets.split("\n").map((line) => line.split("&"))
  return prefixes.split(/\s+/u).filter((e) => e.includes("=")).map((entry) => {
    const [prefix = "", index = ""] = entry.split("=")
    return [prefix, sets[Number(index)]!] as const
  })
}
const allPrefixes = [...tableOf(Nanp.prefixes, Nanp.zoneSets), ...tableOf(World.prefixes, World.zoneSets)]
const naiveZones = (e164: string): ReadonlyArray<string> | undefined => {
  let best: readonly [string, ReadonlyArray<string>] | undefined
  for (const row of allPrefixes) {
    if (e164.startsWith(`+${row[0]}`) && (best === undefined || row[0].length > best[0].length)) best = row
  }
  return best?.[1]
}

describe("RecipientZones against the tables", () => {
  it("knows every zone of the data in this runtime's time zone database", () => {
    const zones = new Set([...Nanp.zoneSets.split(/[\n&]/u), ...World.zoneSets.split(/[\n&]/u)])
    for (const zone of zones) assert.isTrue(isIanaTimeZone(zone), zone)
  })

  it.prop(
    "resolves like a naive longest-prefix search over the generated tables",
    {
      prefix: Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: allPrefixes.length - 1 }))),
      tail: Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 99_999_999 }))),
      cut: Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 })))
    },
    ({ cut, prefix, tail }) => {
      // Start from a known prefix, sometimes cut short so shorter and unknown prefixes are drawn as well.
      const known = allPrefixes[prefix]![0]
      const digits = (known.slice(0, Math.max(1, known.length - cut)) + String(tail)).slice(0, 15)
      const number = `+${digits}`
      const expected = naiveZones(number)
      const got = zonesFor(number)
      if (expected !== undefined) assert.deepStrictEqual(got, [...expected].sort(), number)
      else if (digits.startsWith("1")) assert.include(Object.values(fallbackZones), got, number)
      else assert.deepStrictEqual(got, [], number)
    },
    { arbitrary: { runs: 2000 } }
  )
})
