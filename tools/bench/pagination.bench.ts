// Throughput of the pagination-key codec (packages/domain/src/Pagination.ts) against a naive
// baseline measured in the same run: JSON.stringify + base64url to encode, base64url + JSON.parse
// to decode, no MAC. One "op" is an encode followed by a decode of the key it produced, as a list
// request does for the key it receives and the key it returns.
//
//   node tools/bench/pagination.bench.ts [--rounds=15] [--ops=20000]
//
// Prints a Markdown table of medians over the rounds. The codec and the baseline alternate within
// each round, so background load on a shared machine hits both alike and the ratio stays meaningful.
// The target is 200,000 ops/s; the table says whether each workload meets it (the exit code is 0
// either way: a loaded machine is not a regression).
import { OrgId } from "@svc/domain/models/Ids.ts"
import { Buffer } from "node:buffer"
import * as os from "node:os"
import {
  type CursorContext,
  type CursorPosition,
  makeCursorCodec,
  queryFingerprint
} from "../../packages/domain/src/Pagination.ts"

const TARGET = 200_000

const argument = (name: string, fallback: number): number => {
  const raw = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1]
  const value = raw === undefined ? Number.NaN : Number(raw)
  return Number.isInteger(value) && value > 0 ? value : fallback
}
const rounds = argument("rounds", 15)
const ops = argument("ops", 20_000)

const codec = makeCursorCodec({ secret: "benchmark secret, at least thirty-two bytes long" })

// A deterministic generator, so every run measures the same positions.
let seed = 0x2545f491
const random = (): number => {
  seed ^= seed << 13
  seed ^= seed >>> 17
  seed ^= seed << 5
  return (seed >>> 0) / 0x100000000
}
const hexId = (length: number): string =>
  Array.from({ length }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("")
const uuid = (): string => `${hexId(8)}-${hexId(4)}-4${hexId(3)}-a${hexId(3)}-${hexId(12)}`

interface Workload {
  readonly name: string
  readonly context: CursorContext
  readonly positions: ReadonlyArray<CursorPosition>
}

const POSITIONS = 1024
const ORG = OrgId.make("org_7f3a9c21")
const workloads: ReadonlyArray<Workload> = [
  {
    name: "contacts (ms timestamp, uuid)",
    context: {
      orgId: ORG,
      queryFingerprint: queryFingerprint({
        resource: "contacts",
        sort_order: "desc",
        search_query: "son",
        filter_criteria: { external_id: { type: "string", op: "eq", value: "crm-1" } }
      })
    },
    positions: Array.from({ length: POSITIONS }, () => ({
      sortValue: 1_700_000_000_000 + Math.floor(random() * 40_000_000_000),
      id: uuid()
    }))
  },
  {
    name: "batch tests (ms timestamp, 24-char id)",
    context: {
      orgId: ORG,
      queryFingerprint: queryFingerprint({ resource: "batch-tests", type: "svc-llm", llm_id: "llm_1", version: 3 })
    },
    positions: Array.from({ length: POSITIONS }, () => ({
      sortValue: 1_700_000_000_000 + Math.floor(random() * 40_000_000_000),
      id: `tcbj_${hexId(19)}`
    }))
  },
  {
    name: "string sort value, not a spec sort (name, uuid)",
    context: { orgId: ORG, queryFingerprint: queryFingerprint({ resource: "contacts", sort: "name" }) },
    positions: Array.from({ length: POSITIONS }, (_, i) => ({ sortValue: `Anna Maria ${i}`, id: uuid() }))
  }
]

// The baseline carries the same information as a key, in the obvious way, and checks the binding.
const naiveEncode = (position: CursorPosition, context: CursorContext): string =>
  Buffer.from(
    JSON.stringify({ v: 1, o: context.orgId, q: context.queryFingerprint, s: position.sortValue, i: position.id })
  ).toString("base64url")

const naiveDecode = (key: string, context: CursorContext): CursorPosition | undefined => {
  const value = JSON.parse(Buffer.from(key, "base64url").toString("utf8"))
  return value.v === 1 && value.o === context.orgId && value.q === context.queryFingerprint
    ? { sortValue: value.s, id: value.i }
    : undefined
}

let sink = 0

/** Operations per second of `body` run `ops` times, cycling over the POSITIONS inputs. */
const measure = (body: (index: number) => number): number => {
  const started = process.hrtime.bigint()
  for (let i = 0; i < ops; i++) sink += body(i % POSITIONS)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return ops / seconds
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const thousands = (n: number): string => Math.round(n).toLocaleString("en-US")
const micros = (perSecond: number): string => (1e6 / perSecond).toFixed(2)

interface Suite {
  readonly name: string
  readonly keyLength: number
  readonly bodies: Record<"roundTrip" | "naive" | "encode" | "decode", (index: number) => number>
  readonly samples: Record<"roundTrip" | "naive" | "encode" | "decode", Array<number>>
}

const suites: ReadonlyArray<Suite> = workloads.map(({ context, name, positions }) => {
  // Keys the decode-only measurement reads: minted once, outside the timed loop.
  const keys = positions.map((position) => codec.encode(position, context))
  return {
    name,
    keyLength: keys[0]!.length,
    bodies: {
      roundTrip: (i) => codec.decode(codec.encode(positions[i]!, context), context)._tag === "Success" ? 1 : 0,
      naive: (i) => naiveDecode(naiveEncode(positions[i]!, context), context) === undefined ? 0 : 1,
      encode: (i) => codec.encode(positions[i]!, context).length,
      decode: (i) => codec.decode(keys[i]!, context)._tag === "Success" ? 1 : 0
    },
    samples: { roundTrip: [], naive: [], encode: [], decode: [] }
  }
})

const loadBefore = os.loadavg()[0]!
// Warm-up: let the JIT settle before anything is timed.
for (const suite of suites) for (const body of Object.values(suite.bodies)) measure(body)
// Every round measures every workload and both codecs, so load that comes and goes hits all rows alike.
for (let round = 0; round < rounds; round++) {
  for (const suite of suites) {
    for (const kind of ["roundTrip", "naive", "encode", "decode"] as const) {
      suite.samples[kind].push(measure(suite.bodies[kind]))
    }
  }
}
const loadAfter = os.loadavg()[0]!

const rows = suites.map(({ keyLength, name, samples }) => {
  const ours = median(samples.roundTrip)
  const baseline = median(samples.naive)
  return `| ${name} | ${keyLength} | ${thousands(ours)} | ${thousands(Math.max(...samples.roundTrip))} | ` +
    `${micros(median(samples.encode))} | ${micros(median(samples.decode))} | ${thousands(baseline)} | ` +
    `${(ours / baseline).toFixed(2)} | ${ours >= TARGET ? "yes" : "no"} |`
})

const cpu = os.cpus()[0]?.model ?? "unknown CPU"
const lines = [
  `Pagination key codec, Node ${process.version}, ${cpu} x ${os.cpus().length}, ` +
  `1-minute load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after; ` +
  `medians of ${rounds} rounds x ${thousands(ops)} ops (one op = encode + decode of the key it made).`,
  "",
  "| workload | key chars | codec ops/s | codec best round | encode µs | decode µs | naive ops/s | codec / naive " +
  "| >= 200k ops/s |",
  "|---|---:|---:|---:|---:|---:|---:|---:|:---:|",
  ...rows,
  "",
  `naive = JSON.stringify + base64url, then base64url + JSON.parse, no MAC. (checksum ${sink % 1000})`,
  ""
]
process.stdout.write(lines.join("\n"))
