/**
 * Where a fixed list of phone numbers ring, written by hand for the tests (issue 28: "its own zone expectations for
 * a fixed list of area codes (single-zone and split ones)"): the IANA zones a conservative dialer must treat the
 * number as being in, and the state the area code presumes (calling-rules.md: "calls to FL area codes presumed to
 * reach FL residents"). The zones come from where the area code or exchange serves (the city named in each row) and
 * the US time zone boundaries (49 CFR part 71); nothing here is read from the product's generated tables.
 *
 * A key is an E.164 prefix: "+1305" (the whole area code is in one zone, any exchange) or "+1850432" (an exchange
 * of an area code that straddles a zone line). Numbers are built from a key by `numberOf`.
 */

export interface ExpectedZones {
  readonly prefix: string
  readonly where: string
  readonly zones: ReadonlyArray<string>
  /** The states the area code presumes; empty for territories and Canada (no state rules apply). */
  readonly states: ReadonlyArray<string>
}

/** Every US and Canadian zone, for area codes no data set knows (decision 0620, rule 2: calling-rules.md). */
export const everyUsAndCanadianZone: ReadonlyArray<string> = [
  "America/Adak",
  "America/Anchorage",
  "America/Boise",
  "America/Chicago",
  "America/Denver",
  "America/Edmonton",
  "America/Fort_Nelson",
  "America/Halifax",
  "America/Juneau",
  "America/Los_Angeles",
  "America/New_York",
  "America/North_Dakota/Center",
  "America/Phoenix",
  "America/Puerto_Rico",
  "America/Regina",
  "America/St_Johns",
  "America/St_Thomas",
  "America/Toronto",
  "America/Vancouver",
  "America/Winnipeg",
  "Pacific/Guam",
  "Pacific/Honolulu",
  "Pacific/Saipan"
]

const one = (prefix: string, where: string, zone: string, states: ReadonlyArray<string>): ExpectedZones => ({
  prefix,
  where,
  zones: [zone],
  states
})

/** Area codes wholly inside one zone: any exchange. One per state row of the calling rules, and then some. */
export const singleZone: ReadonlyArray<ExpectedZones> = [
  one("+1212", "New York City", "America/New_York", ["NY"]),
  one("+1305", "Miami, FL", "America/New_York", ["FL"]),
  one("+1405", "Oklahoma City, OK", "America/Chicago", ["OK"]),
  one("+1410", "Baltimore, MD", "America/New_York", ["MD"]),
  one("+1203", "Bridgeport and New Haven, CT", "America/New_York", ["CT"]),
  one("+1206", "Seattle, WA", "America/Los_Angeles", ["WA"]),
  one("+1214", "Dallas, TX", "America/Chicago", ["TX"]),
  one("+1205", "Birmingham, AL", "America/Chicago", ["AL"]),
  one("+1504", "New Orleans, LA", "America/Chicago", ["LA"]),
  one("+1601", "Jackson, MS", "America/Chicago", ["MS"]),
  one("+1502", "Louisville, KY", "America/New_York", ["KY"]),
  one("+1313", "Detroit, MI", "America/New_York", ["MI"]),
  one("+1612", "Minneapolis, MN", "America/Chicago", ["MN"]),
  one("+1702", "Las Vegas, NV", "America/Los_Angeles", ["NV"]),
  one("+1401", "Rhode Island (the whole state)", "America/New_York", ["RI"]),
  one("+1215", "Philadelphia, PA", "America/New_York", ["PA"]),
  one("+1808", "Hawaii (no DST)", "Pacific/Honolulu", ["HI"]),
  one("+1602", "Phoenix, AZ (no DST)", "America/Phoenix", ["AZ"]),
  one("+1312", "Chicago, IL", "America/Chicago", ["IL"]),
  one("+1306", "Saskatchewan (UTC-6 all year)", "America/Regina", ["SK"]),
  one("+1915", "El Paso, TX (Mountain, unlike the rest of Texas)", "America/Denver", ["TX"]),
  one("+1787", "Puerto Rico (AST, no DST; not a state)", "America/Puerto_Rico", [])
]

/** Exchanges of area codes split by a zone line: the exchange says which side. */
export const splitAreaExchanges: ReadonlyArray<ExpectedZones> = [
  one("+1850432", "Pensacola, FL panhandle west of the Apalachicola River", "America/Chicago", ["FL"]),
  one("+1850222", "Tallahassee, FL", "America/New_York", ["FL"]),
  one("+1270442", "Paducah, western KY", "America/Chicago", ["KY"]),
  one("+1270765", "Elizabethtown, KY", "America/New_York", ["KY"]),
  one("+1208334", "Boise, southern ID", "America/Denver", ["ID"]),
  one("+1208883", "Moscow, northern ID", "America/Los_Angeles", ["ID"]),
  one("+1906774", "Iron Mountain, MI's Upper Peninsula on the Wisconsin line", "America/Chicago", ["MI"]),
  one("+1906228", "Marquette, MI", "America/New_York", ["MI"]),
  one("+1812422", "Evansville, southwestern IN", "America/Chicago", ["IN"]),
  one("+1812332", "Bloomington, IN", "America/New_York", ["IN"])
]

/** Area codes missing from every data set (calling-rules.md: 624 and 729): every US and Canadian zone. */
export const unknownAreas: ReadonlyArray<ExpectedZones> = [
  { prefix: "+1624", where: "not in the data", zones: everyUsAndCanadianZone, states: [] },
  { prefix: "+1729", where: "not in the data", zones: everyUsAndCanadianZone, states: [] }
]

export const allExpectations: ReadonlyArray<ExpectedZones> = [...singleZone, ...splitAreaExchanges, ...unknownAreas]

/**
 * The zones of the states a contact's address may name in the tests (the address state narrows the number's zones to
 * those inside the state, or adds the state's when none are: decision 0620, rule 4). From 49 CFR part 71.
 */
export const stateZones: Readonly<Record<string, ReadonlyArray<string>>> = {
  FL: ["America/Chicago", "America/New_York"],
  TX: ["America/Chicago", "America/Denver"],
  AL: ["America/Chicago"],
  RI: ["America/New_York"],
  PA: ["America/New_York"],
  CT: ["America/New_York"],
  KY: ["America/Chicago", "America/New_York"]
}

/** A full E.164 number under a prefix: the prefix, then digits from `tail` (kept free of N11-style exchanges). */
export const numberOf = (prefix: string, tail: number): string => {
  const digits = 12 - prefix.length
  const body = String(Math.abs(Math.trunc(tail)) % 10 ** digits).padStart(digits, "0")
  // an exchange (the 3 digits after the area code) must start with 2-9 under NANP: force it when the prefix stops
  // at the area code
  return prefix.length === 5 ? `${prefix}${String(2 + (Number(body[0]) % 8))}${body.slice(1)}` : `${prefix}${body}`
}
