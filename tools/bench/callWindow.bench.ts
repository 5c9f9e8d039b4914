/**
 * Throughput of the call-window evaluator (`packages/domain/src/CallWindow.ts`) against a naive baseline that asks
 * `Intl.DateTimeFormat` for the local weekday and wall time of every instant it looks at, stepping minute by minute
 * to find the next opening or closing. Both run in the same process on the same instants, over several rounds; the
 * table reports the median rate of each and their ratio.
 *
 * Run: `node tools/bench/callWindow.bench.ts` (Node 24 strips the types). Targets (issue 3): isOpen >= 1,000,000/s,
 * nextOpening >= 100,000/s and >= 100x the minute scan.
 */
import { type CanonicalCallTimeWindow, canonicalize, isOpen, nextClosing, nextOpening } from "@svc/domain/CallWindow.ts"
import { Option } from "effect"

const rounds = 7
const minuteMs = 60_000
const horizonMs = 8 * 1440 * minuteMs
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
  return (w.day as ReadonlyArray<string>).includes(weekday) &&
    w.windows.some((x) => minute >= x.start && minute < x.end)
}
const naiveNext = (w: CanonicalCallTimeWindow, t: number, open: boolean): number | undefined => {
  if (naiveIsOpen(w, t) === open) return t
  for (let u = Math.ceil(t / minuteMs) * minuteMs; u - t <= horizonMs; u += minuteMs) {
    if (naiveIsOpen(w, u) === open) return u
  }
  return undefined
}

// Results are folded into a sink so no call can be optimised away.
let sink = 0

/** Calls per second of `f` over `count` instants taken round-robin from the pool. */
const rate = (count: number, f: (t: number) => unknown): number => {
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    if (f(instants[i & (instants.length - 1)]!) !== undefined) sink++
  }
  return count / ((performance.now() - started) / 1000)
}

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

// Both implementations must agree before their speed means anything.
for (let i = 0; i < 300; i++) {
  const t = instants[i]!
  const opening = Option.getOrUndefined(nextOpening(window, t))
  const closing = Option.getOrUndefined(nextClosing(window, t))
  if (
    isOpen(window, t) !== naiveIsOpen(window, t) || opening !== naiveNext(window, t, true) ||
    closing !== naiveNext(window, t, false)
  ) {
    throw new Error(`CallWindow and the naive scan disagree at ${new Date(t).toISOString()}`)
  }
}

const cases = [
  {
    name: "isOpen",
    fast: () => rate(2_000_000, (t) => isOpen(window, t)),
    naive: () => rate(20_000, (t) => naiveIsOpen(window, t)),
    target: "1,000,000/s",
    met: (fast: number) => fast >= 1_000_000
  },
  {
    name: "nextOpening",
    fast: () => rate(500_000, (t) => nextOpening(window, t)),
    naive: () => rate(60, (t) => naiveNext(window, t, true)),
    target: "100,000/s and 100x",
    met: (fast: number, naive: number) => fast >= 100_000 && fast / naive >= 100
  },
  {
    name: "nextClosing",
    fast: () => rate(500_000, (t) => nextClosing(window, t)),
    naive: () => rate(200, (t) => naiveNext(window, t, false)),
    target: "-",
    met: () => true
  }
]

const samples = cases.map(() => ({ fast: [] as Array<number>, naive: [] as Array<number> }))
for (let round = 0; round < rounds; round++) {
  cases.forEach((c, i) => {
    samples[i]!.fast.push(c.fast())
    samples[i]!.naive.push(c.naive())
  })
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
const lines = [
  `Call window ${window.timezone}, Mon-Fri 09:00-12:00 + 13:00-17:00; ${fmt(instants.length)} random instants ` +
  `in 2026-2030; median of ${rounds} rounds; Node ${process.versions.node}, ICU tz ${process.versions.tz}.`,
  "",
  "| operation | CallWindow (calls/s) | naive Intl minute scan (calls/s) | speed-up | target | met |",
  "|---|---:|---:|---:|---|---|",
  ...cases.map((c, i) => {
    const fast = median(samples[i]!.fast)
    const naive = median(samples[i]!.naive)
    return `| ${c.name} | ${fmt(fast)} | ${fmt(naive)} | ${fmt(fast / naive)}x | ${c.target} | ${
      c.met(fast, naive) ? "yes" : "NO"
    } |`
  })
]
process.stdout.write(`${lines.join("\n")}\n${sink < 0 ? "unreachable\n" : ""}`)
