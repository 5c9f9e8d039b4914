/**
 * Throughput of the call-window evaluator (`packages/domain/src/CallWindow.ts`) against a naive baseline that asks
 * `Intl.DateTimeFormat` for the local wall time of every instant it looks at, stepping minute by minute to find the
 * next opening. Both run in the same process on the same instants, over several rounds; the table reports the
 * median rate of each and their ratio.
 *
 * Run: `node tools/bench/callWindow.bench.ts` (Node 24 strips the types). Targets (issue 3): isOpen >= 1,000,000/s,
 * nextOpening >= 100,000/s and >= 100x the minute scan.
 */
import { Option } from "effect"
import { type CanonicalCallTimeWindow, canonicalize, isOpen, nextOpening } from "../../packages/domain/src/CallWindow.ts"

const rounds = 7
const minuteMs = 60_000
const from = Date.UTC(2026, 0, 1)
const to = Date.UTC(2031, 0, 1)

// A deterministic generator (mulberry32), so every run measures the same instants.
const random = (() => {
  let seed = 0x5eed
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
})()

const instants = Array.from({ length: 1 << 16 }, () => from + Math.floor(random() * (to - from)))

// Business hours on weekdays with a lunch break, in a zone with DST: the shape most batches use.
const window: CanonicalCallTimeWindow = canonicalize({
  windows: [{ start: 540, end: 720 }, { start: 780, end: 1020 }],
  timezone: "America/New_York",
  day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
})

// Baseline: the obvious implementation, one Intl lookup of the local weekday and time per instant examined.
const dayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
const naiveFormat = new Intl.DateTimeFormat("en-US", {
  timeZone: window.timezone,
  hourCycle: "h23",
  weekday: "long",
  hour: "2-digit",
  minute: "2-digit"
})
const naiveIsOpen = (w: CanonicalCallTimeWindow, t: number): boolean => {
  let weekday = ""
  let minute = 0
  for (const part of naiveFormat.formatToParts(t)) {
    if (part.type === "weekday") weekday = part.value
    else if (part.type === "hour") minute += Number(part.value) * 60
    else if (part.type === "minute") minute += Number(part.value)
  }
  if (!w.day.includes(weekday as (typeof w.day)[number]) || !dayNames.includes(weekday)) return false
  return w.windows.some((x) => minute >= x.start && minute < x.end)
}
const naiveNextOpening = (w: CanonicalCallTimeWindow, t: number): number | undefined => {
  if (naiveIsOpen(w, t)) return t
  for (let u = Math.ceil(t / minuteMs) * minuteMs; u - t <= 8 * 1440 * minuteMs; u += minuteMs) {
    if (naiveIsOpen(w, u)) return u
  }
  return undefined
}

/** Calls per second of `f` over `count` instants taken round-robin from the pool. */
const rate = (count: number, f: (t: number) => unknown): number => {
  let sink = 0
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    if (f(instants[i & (instants.length - 1)]!) !== undefined) sink++
  }
  const seconds = (performance.now() - started) / 1000
  if (sink < 0) throw new Error("unreachable")
  return count / seconds
}

const median = (xs: Array<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

// Both implementations must agree before their speed means anything.
for (let i = 0; i < 200; i++) {
  const t = instants[i]!
  const fast = Option.getOrUndefined(nextOpening(window, t))
  const slow = naiveNextOpening(window, t)
  if (isOpen(window, t) !== naiveIsOpen(window, t) || fast !== slow) {
    throw new Error(`disagreement at ${new Date(t).toISOString()}: ${fast} vs ${slow}`)
  }
}

const samples = { isOpen: [] as Array<number>, naiveIsOpen: [] as Array<number>, next: [] as Array<number>, naiveNext: [] as Array<number> }
for (let round = 0; round < rounds; round++) {
  samples.isOpen.push(rate(2_000_000, (t) => isOpen(window, t)))
  samples.naiveIsOpen.push(rate(20_000, (t) => naiveIsOpen(window, t)))
  samples.next.push(rate(300_000, (t) => nextOpening(window, t)))
  samples.naiveNext.push(rate(60, (t) => naiveNextOpening(window, t)))
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
const rows = [
  ["isOpen", median(samples.isOpen), median(samples.naiveIsOpen), 1_000_000],
  ["nextOpening", median(samples.next), median(samples.naiveNext), 100_000]
] as const
const lines = [
  `Call window evaluation, ${window.timezone} weekdays 09:00-12:00 and 13:00-17:00, ${instants.length.toLocaleString("en-US")} random instants in 2026-2030, median of ${rounds} rounds (Node ${process.versions.node}).`,
  "",
  "| operation | CallWindow (ops/s) | naive Intl scan (ops/s) | speed-up | target | met |",
  "|---|---:|---:|---:|---:|---|",
  ...rows.map(([name, fast, slow, target]) =>
    `| ${name} | ${fmt(fast)} | ${fmt(slow)} | ${fmt(fast / slow)}x | >= ${fmt(target)}/s${name === "nextOpening" ? ", >= 100x" : ""} | ${fast >= target && (name !== "nextOpening" || fast / slow >= 100) ? "yes" : "no"} |`
  )
]
process.stdout.write(lines.join("\n") + "\n")
