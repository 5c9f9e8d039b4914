/**
 * A time zone's UTC offsets, read from `Intl.DateTimeFormat` (the only tz database an `effect`-only package can
 * reach). Formatting is slow (microseconds per call), so each zone's offsets are cached as short tables of
 * transitions per 28-day bucket, and a question about an instant is a lookup in its bucket. Used by the call
 * windows (`../CallWindow.ts`), which answer every question with arithmetic per local day on these offsets.
 */

const secondMs = 1000
export const minuteMs = 60 * secondMs
export const dayMs = 1440 * minuteMs
// Offsets are cached per bucket of 28 days: a first look at a zone costs ~30 Intl calls instead of a year's worth.
const bucketMs = 28 * dayMs

/** Offsets of one zone over `[start, start + bucketMs)`: `offset0` from `start`, then `offsets[i]` from `at[i]`. */
interface Bucket {
  readonly start: number
  readonly offset0: number
  readonly at: Array<number>
  readonly offsets: Array<number>
}

/** A zone's formatter and its cached offset tables. */
export interface Zone {
  readonly format: (instant: number) => string
  readonly buckets: Map<number, Bucket>
  lastIndex: number
  last: Bucket | undefined
}

// Zones are shared by every name Intl resolves to the same zone ("US/Eastern", "america/new_york"), so the name
// cache can be cleared when odd spellings pile up without losing any offset table.
const zonesByResolvedName = new Map<string, Zone>()
const zonesByName = new Map<string, Zone>()
const maxZoneNames = 4096

const makeFormat = (name: string): Intl.DateTimeFormat | undefined => {
  if (name.length === 0 || name[0] === "+" || name[0] === "-") return undefined
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name, timeZoneName: "longOffset" })
  } catch {
    return undefined
  }
}

/** The zone `name` names (any spelling Intl accepts, bare UTC offsets refused), or `undefined`. Never throws. */
export function zoneFor(name: string): Zone | undefined {
  const cached = zonesByName.get(name)
  if (cached !== undefined) return cached
  const dtf = makeFormat(name)
  if (dtf === undefined) return undefined
  const resolved = dtf.resolvedOptions().timeZone
  let zone = zonesByResolvedName.get(resolved)
  if (zone === undefined) {
    zone = { format: dtf.format, buckets: new Map(), lastIndex: Number.NaN, last: undefined }
    // Stryker disable next-line CallExpression: equivalent — a cache (zone by resolved name); without it each spelling builds the same offsets again
    zonesByResolvedName.set(resolved, zone)
  }
  // Stryker disable next-line ConditionalExpression,EqualityOperator,CallExpression: equivalent — the bound of a cache of zone names (4,096): clearing it early, late or never changes no answer
  if (zonesByName.size >= maxZoneNames) zonesByName.clear()
  // Stryker disable next-line CallExpression: equivalent — a cache (zone by name); without it the zone is found again by its resolved name
  zonesByName.set(name, zone)
  return zone
}

/** The zone's UTC offset in milliseconds at `instant`, read from Intl ("12/31/2025, GMT-05:00"). */
const rawOffset = (zone: Zone, instant: number): number => {
  const text = zone.format(instant)
  const at = text.lastIndexOf("GMT")
  if (at < 0 || at + 3 >= text.length) return 0
  const sign = text.charCodeAt(at + 3) === 45 || text.charCodeAt(at + 3) === 0x2212 ? -1 : 1
  const [h = "0", m = "0", s = "0"] = text.slice(at + 4).split(":")
  return sign * ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * secondMs
}

// Zones change offset a few times a year at most, so sampling once a day finds every change; each one is then
// located to the second (tzdata transitions fall on whole seconds) by bisection, repeatedly if one day holds two
// changes. Only a change that reverts within the same day could hide between samples; tzdata has none.
const buildBucket = (zone: Zone, index: number): Bucket => {
  const start = index * bucketMs
  const end = start + bucketMs
  const at: Array<number> = []
  const offsets: Array<number> = []
  const offset0 = rawOffset(zone, start)
  let previous = offset0
  for (let sample = start + dayMs; sample <= end; sample += dayMs) {
    const next = rawOffset(zone, sample)
    let lo = sample - dayMs
    while (next !== previous) {
      let hi = sample
      let hiOffset = next
      while (hi - lo > secondMs) {
        const mid = lo + Math.floor((hi - lo) / 2 / secondMs) * secondMs
        const offset = rawOffset(zone, mid)
        if (offset === previous) lo = mid
        else {
          hi = mid
          hiOffset = offset
        }
      }
      if (hi < end) {
        at.push(hi)
        offsets.push(hiOffset)
      }
      lo = hi
      previous = hiOffset
    }
  }
  return { start, offset0, at, offsets }
}

const bucketFor = (zone: Zone, instant: number): Bucket => {
  const index = Math.floor(instant / bucketMs)
  if (index === zone.lastIndex) return zone.last!
  let bucket = zone.buckets.get(index)
  if (bucket === undefined) {
    bucket = buildBucket(zone, index)
    // Stryker disable next-line CallExpression: equivalent — a cache (buckets by index); without it the same bucket is built again
    zone.buckets.set(index, bucket)
  }
  zone.lastIndex = index
  zone.last = bucket
  return bucket
}

/** The zone's UTC offset in milliseconds at `instant`. */
export const offsetAt = (zone: Zone, instant: number): number => {
  const bucket = bucketFor(zone, instant)
  let offset = bucket.offset0
  for (let i = 0; i < bucket.at.length; i++) {
    if (instant < bucket.at[i]!) break
    offset = bucket.offsets[i]!
  }
  return offset
}

// `stretchAt` answers two numbers without allocating: the offset goes here, the end is returned.
export let stretchOffset = 0

/**
 * The constant-offset stretch that contains `instant`: returns where it ends (the next transition, or the end of
 * the cached bucket) and leaves its offset in `stretchOffset`.
 */
export const stretchAt = (zone: Zone, instant: number): number => {
  const bucket = bucketFor(zone, instant)
  let offset = bucket.offset0
  for (let i = 0; i < bucket.at.length; i++) {
    if (instant < bucket.at[i]!) {
      stretchOffset = offset
      return bucket.at[i]!
    }
    offset = bucket.offsets[i]!
  }
  stretchOffset = offset
  return bucket.start + bucketMs
}
