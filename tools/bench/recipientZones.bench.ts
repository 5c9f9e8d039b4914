/**
 * Recipient zones and legal hours (issue 15, Performance: "zone resolution >= 1M numbers/s in the domain bench").
 *
 * 1. `zonesFor` (longest-prefix match over area code + exchange, world prefixes, NANP fallback) beside a baseline
 *    that only looks the 3-digit area code up in a plain `Map` (what a hand-written area-code table would cost).
 * 2. `nextLegalOpening` for one task (federal + its state's row in every candidate zone, inside a batch window)
 *    beside `CallWindow.nextOpening` of the batch window alone (today's per-batch cost, no legal hours).
 *
 * Both sides of each row run in the same process on the same inputs, alternating, over several rounds; the table
 * reports medians and ratios. Run: `npm run bench:zones` (Node 24 strips the types).
 */
import { type CallTimeWindow, nextOpening } from "@svc/domain/CallWindow.ts"
import { defaultPolicy, type JurisdictionRule, rulesFor } from "@svc/domain/compliance/CallingPolicy.ts"
import { nextLegalOpening } from "@svc/domain/compliance/LegalHours.ts"
import { areaCodeStates, type ZoneSet, zonesFor } from "@svc/domain/compliance/RecipientZones.ts"
import { Option } from "effect"

const rounds = 7

// A deterministic generator (mulberry32), so every run measures the same inputs.
const random = (() => {
  let seed = 0x5eed
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
})()
const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join("")

// Mostly NANP numbers over every area code 200-999 (known, exchange-level and unknown ones), some world numbers.
const numbers = Array.from({ length: 1 << 16 }, (_, i) =>
  i % 10 === 9
    ? `+${["44", "49", "33", "61", "7", "81", "91"][i % 7]}${digits(9)}`
    : `+1${200 + Math.floor(random() * 800)}${2 + Math.floor(random() * 8)}${digits(6)}`)

// Baseline: a plain Map from the 3-digit area code to a zone set (built from zonesFor once, so both agree on NANP).
const baselineTable = new Map<string, ZoneSet>()
for (let area = 200; area < 1000; area++) baselineTable.set(String(area), zonesFor(`+1${area}5550100`))
const baseline = (e164: string): ZoneSet | undefined => baselineTable.get(e164.slice(2, 5))

let sink = 0
const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const perSecond = (count: number, f: (i: number) => number): number => {
  const started = performance.now()
  for (let i = 0; i < count; i++) sink += f(i)
  return count / ((performance.now() - started) / 1000)
}

// Legal-hours inputs: one task per number (its zones and rules), a weekday business-hours window in New York, and
// instants across 2026-2030.
const window: CallTimeWindow = {
  windows: [{ start: 540, end: 1020 }],
  timezone: "America/New_York",
  day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
}
const from = Date.UTC(2026, 0, 1)
const to = Date.UTC(2031, 0, 1)
const tasks: Array<{ zones: ZoneSet; rules: ReadonlyArray<JurisdictionRule>; at: number }> = numbers
  .filter((n) => n.startsWith("+1"))
  .slice(0, 4096)
  .map((n) => ({
    zones: zonesFor(n),
    rules: rulesFor(defaultPolicy, areaCodeStates(n)),
    at: from + Math.floor(random() * (to - from))
  }))
const known = tasks.filter((t) => t.zones.length <= 2)

const cases = [
  {
    name: "zone resolution (numbers/s)",
    fast: () => perSecond(4_000_000, (i) => zonesFor(numbers[i & 0xffff]!).length),
    base: () => perSecond(4_000_000, (i) => baseline(numbers[i & 0xffff]!)?.length ?? 0),
    fastName: "zonesFor",
    baseName: "Map.get(area code)",
    target: ">= 1,000,000/s",
    met: (fast: number) => fast >= 1_000_000
  },
  {
    name: "next opening, known area codes (calls/s)",
    fast: () =>
      perSecond(100_000, (i) => {
        const t = known[i % known.length]!
        return Option.getOrElse(nextLegalOpening(t.at, t.zones, t.rules, window), () => 0)
      }),
    base: () => perSecond(100_000, (i) => Option.getOrElse(nextOpening(window, known[i % known.length]!.at), () => 0)),
    fastName: "nextLegalOpening",
    baseName: "CallWindow.nextOpening",
    target: "-",
    met: () => true
  },
  {
    name: "next opening, all numbers incl. 20+ zone fallbacks (calls/s)",
    fast: () =>
      perSecond(10_000, (i) => {
        const t = tasks[i % tasks.length]!
        return Option.getOrElse(nextLegalOpening(t.at, t.zones, t.rules, window), () => 0)
      }),
    base: () => perSecond(200_000, (i) => Option.getOrElse(nextOpening(window, tasks[i % tasks.length]!.at), () => 0)),
    fastName: "nextLegalOpening",
    baseName: "CallWindow.nextOpening",
    target: "-",
    met: () => true
  }
]

// Warm up both sides (tables, Intl offset caches) before measuring.
for (const c of cases) {
  c.fast()
  c.base()
}
const samples = cases.map(() => ({ fast: [] as Array<number>, base: [] as Array<number> }))
for (let round = 0; round < rounds; round++) {
  cases.forEach((c, i) => {
    if (round % 2 === 0) {
      samples[i]!.fast.push(c.fast())
      samples[i]!.base.push(c.base())
    } else {
      samples[i]!.base.push(c.base())
      samples[i]!.fast.push(c.fast())
    }
  })
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
const lines = [
  `${fmt(numbers.length)} numbers (90 % NANP over area codes 200-999, 10 % world); ${fmt(tasks.length)} tasks ` +
  `(${fmt(known.length)} with <= 2 zones) at random instants in 2026-2030, window Mon-Fri 09:00-17:00 ` +
  `America/New_York; median of ${rounds} alternating rounds; Node ${process.versions.node}, ICU tz ${process.versions.tz}.`,
  "",
  "| measure | ours | rate | baseline | rate | ours / baseline | target | met |",
  "|---|---|---:|---|---:|---:|---|---|",
  ...cases.map((c, i) => {
    const fast = median(samples[i]!.fast)
    const base = median(samples[i]!.base)
    return `| ${c.name} | ${c.fastName} | ${fmt(fast)} | ${c.baseName} | ${fmt(base)} | ${
      (fast / base).toFixed(2)
    } | ${c.target} | ${c.met(fast) ? "yes" : "NO"} |`
  })
]
process.stdout.write(`${lines.join("\n")}\n${sink < 0 ? "unreachable\n" : ""}`)
