/**
 * Throughput of the call-window evaluator (`packages/domain/src/CallWindow.ts`) against baselines that ask
 * `Intl.DateTimeFormat` for the local weekday and wall time of the instants they look at. For `nextOpening` and
 * `nextClosing` the fair baseline (issue 17, "fair baselines") jumps straight to the next window boundary in wall
 * time and checks it, scanning minute by minute only within the hour around a landing that a DST change moved;
 * the minute-by-minute scan of the first version is kept as a second column, for the record. All run in the same
 * process on the same instants, in alternating rounds; the table reports the median rate of each and the ratios.
 *
 * Run: `node tools/bench/callWindow.bench.ts` (Node 24 strips the types). Targets (issue 3): isOpen >= 1,000,000/s,
 * nextOpening >= 100,000/s and >= 100x the minute scan.
 */
import { type CanonicalCallTimeWindow, canonicalize, isOpen, nextClosing, nextOpening } from "@svc/domain/CallWindow.ts"
import { Option } from "effect"
import * as os from "node:os"

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

// Fair baseline: jump to the next boundary in wall time, as a careful first implementation would.
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
const localOf = (t: number): { readonly day: number; readonly minute: number } => {
  let day = 0
  let minute = 0
  for (const part of naiveFormat.formatToParts(t)) {
    if (part.type === "weekday") day = DAYS.indexOf(part.value)
    else if (part.type === "hour") minute += Number(part.value) * 60
    else if (part.type === "minute") minute += Number(part.value)
  }
  return { day, minute }
}
const openAt = (w: CanonicalCallTimeWindow, local: { readonly day: number; readonly minute: number }) =>
  (w.day as ReadonlyArray<string>).includes(DAYS[local.day]!) &&
  w.windows.some((x) => local.minute >= x.start && local.minute < x.end)
/** Wall minutes from `local` to the next window start (`open`) or end, on this or a following day. */
const minutesToBoundary = (
  w: CanonicalCallTimeWindow,
  local: { readonly day: number; readonly minute: number },
  open: boolean
): number | undefined => {
  for (let d = 0; d <= 7; d++) {
    if (!(w.day as ReadonlyArray<string>).includes(DAYS[(local.day + d) % 7]!)) continue
    for (const x of w.windows) {
      const boundary = open ? x.start : x.end
      if (d > 0 || boundary > local.minute) return d * 1440 + boundary - local.minute
    }
  }
  return undefined
}
const fairNext = (w: CanonicalCallTimeWindow, t: number, open: boolean): number | undefined => {
  const here = localOf(t)
  if (openAt(w, here) === open) return t
  const delta = minutesToBoundary(w, here, open)
  if (delta === undefined) return undefined
  const landing = t - (((t % minuteMs) + minuteMs) % minuteMs) + delta * minuteMs
  // no DST change in between: the landing is the boundary (its state is right and the minute before is not)
  if (openAt(w, localOf(landing)) === open && openAt(w, localOf(landing - minuteMs)) !== open) {
    return landing > t ? landing : t
  }
  // a DST change moved the wall clock by up to an hour: the boundary is within an hour of the landing
  for (
    let u = Math.max(Math.ceil(t / minuteMs) * minuteMs, landing - 61 * minuteMs);
    u <= landing + 61 * minuteMs;
    u += minuteMs
  ) {
    if (openAt(w, localOf(u)) === open) return u
  }
  return naiveNext(w, t, open)
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

// Every implementation must agree before their speed means anything: on random instants and on instants 71 min 10 s
// apart over the six days around each DST change of the period (where the fair baseline's landing moves).
const dstChanges = [2026, 2027, 2028, 2029, 2030].flatMap((year) => {
  const changes: Array<number> = []
  let offset = new Date(Date.UTC(year, 0, 1)).toLocaleString("en-US", {
    timeZone: window.timezone,
    hour: "2-digit",
    hourCycle: "h23"
  })
  for (let h = Date.UTC(year, 0, 1); h < Date.UTC(year + 1, 0, 1); h += 3_600_000) {
    const next = new Date(h).toLocaleString("en-US", { timeZone: window.timezone, hour: "2-digit", hourCycle: "h23" })
    const expected = String((Number(offset) + 1) % 24).padStart(2, "0")
    if (next !== expected && h > Date.UTC(year, 0, 1)) changes.push(h)
    offset = next
  }
  return changes
})
if (dstChanges.length !== 10) throw new Error(`expected 10 DST changes in 2026-2030, found ${dstChanges.length}`)
const checked = [
  ...instants.slice(0, 300),
  ...dstChanges.flatMap((h) => Array.from({ length: 120 }, (_, k) => h - 3 * 86_400_000 + k * 7 * 61_000 * 10))
]
for (let i = 0; i < checked.length; i++) {
  const t = checked[i]!
  const opening = Option.getOrUndefined(nextOpening(window, t))
  const closing = Option.getOrUndefined(nextClosing(window, t))
  if (
    isOpen(window, t) !== naiveIsOpen(window, t) || opening !== naiveNext(window, t, true) ||
    closing !== naiveNext(window, t, false) || opening !== fairNext(window, t, true) ||
    closing !== fairNext(window, t, false)
  ) {
    throw new Error(`CallWindow and the naive scan disagree at ${new Date(t).toISOString()}`)
  }
}

const cases = [
  {
    name: "isOpen",
    fast: () => rate(2_000_000, (t) => isOpen(window, t)),
    naive: () => rate(20_000, (t) => naiveIsOpen(window, t)),
    fair: () => rate(20_000, (t) => naiveIsOpen(window, t)),
    target: "1,000,000/s",
    met: (fast: number) => fast >= 1_000_000
  },
  {
    name: "nextOpening",
    fast: () => rate(500_000, (t) => nextOpening(window, t)),
    naive: () => rate(60, (t) => naiveNext(window, t, true)),
    fair: () => rate(5_000, (t) => fairNext(window, t, true)),
    target: "100,000/s and 100x",
    met: (fast: number, naive: number) => fast >= 100_000 && fast / naive >= 100
  },
  {
    name: "nextClosing",
    fast: () => rate(500_000, (t) => nextClosing(window, t)),
    naive: () => rate(200, (t) => naiveNext(window, t, false)),
    fair: () => rate(5_000, (t) => fairNext(window, t, false)),
    target: "-",
    met: () => true
  }
]

const samples = cases.map(() => ({ fast: [] as Array<number>, naive: [] as Array<number>, fair: [] as Array<number> }))
for (let round = 0; round < rounds; round++) {
  cases.forEach((c, i) => {
    samples[i]!.fast.push(c.fast())
    samples[i]!.fair.push(c.fair())
    samples[i]!.naive.push(c.naive())
  })
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
const lines = [
  `Call window ${window.timezone}, Mon-Fri 09:00-12:00 + 13:00-17:00; ${fmt(instants.length)} random instants ` +
  `in 2026-2030; medians of ${rounds} alternating rounds; Node ${process.versions.node}, ICU tz ${process.versions.tz}, ` +
  `${os.cpus().length} cores.`,
  "",
  "| operation | CallWindow (calls/s) | fair Intl baseline (calls/s) | vs fair | Intl minute scan (calls/s) | vs scan | target | met |",
  "|---|---:|---:|---:|---:|---:|---|---|",
  ...cases.map((c, i) => {
    const fast = median(samples[i]!.fast)
    const fair = median(samples[i]!.fair)
    const naive = median(samples[i]!.naive)
    return `| ${c.name} | ${fmt(fast)} | ${fmt(fair)} | ${(fast / fair).toFixed(0)}x | ${fmt(naive)} | ${
      fmt(fast / naive)
    }x | ${c.target} | ${c.met(fast, naive) ? "yes" : "NO"} |`
  })
]
process.stdout.write(`${lines.join("\n")}\n${sink < 0 ? "unreachable\n" : ""}`)
