import { assert, describe, it } from "@effect/vitest"
import { utcMidnight } from "@svc/domain/Deprecation/Rule.ts"
import * as fs from "node:fs"
import * as path from "node:path"
import { hashSources } from "../../src/cache/CodeIdentity.ts"
import * as LintCache from "../../src/cache/LintCache.ts"
import * as LintCacheMemory from "../../src/cache/LintCacheMemory.ts"
import * as LintConfig from "../../src/commands/LintConfig.ts"
import { defaultSourceExtensions, discover } from "../../src/files/Discovery.ts"
import * as FileWatch from "../../src/files/FileWatch.ts"
import { github } from "../../src/reporters/Github.ts"
import { json } from "../../src/reporters/Json.ts"
import { junit } from "../../src/reporters/Junit.ts"
import type { Report } from "../../src/reporters/Report.ts"
import { sarif } from "../../src/reporters/Sarif.ts"
import { stylish } from "../../src/reporters/Stylish.ts"
import { lintAll, type LintContext, skippedProblem, upcomingUntil } from "../../src/rules/Linter.ts"
import { compare, type Problem } from "../../src/rules/Problem.ts"
import { defaultLegacySipHosts } from "../../src/rules/SourcePatterns.ts"
import * as SuppressionsFile from "../../src/suppressions/SuppressionsFile.ts"
import { mulberry32, writeCorpus } from "../support/Corpus.ts"
import { project, tempDir, writeTree } from "../support/Harness.ts"

// Files whose outcome exercises every part of a stored result: inline suppressions (used, unused,
// without reason), a suppressions-file entry, fixes shared by several problems, a suggestion, a
// parse error, binary content and a fix value that JSON cannot carry (.nan).
const SPECIAL: Record<string, string | Buffer> = {
  "special/suppressed.ts": [
    "// svc-lint-disable-next-line list-agents-v1 -- retired with TICKET-1",
    "export const a = (b: string) => fetch(`${b}/list-agents`)",
    "// svc-lint-disable-next-line create-web-call-v2",
    "export const c = 1",
    ""
  ].join("\n"),
  "special/agent.yaml": "# agent\nagent_id: a1\nlanguage: multi\n",
  "special/phones/legacy.json":
    "{\n  \"phone_number\": \"+1\",\n  \"inbound_agent_id\": \"a\",\n  \"outbound_agent_id\": \"b\"\n}\n",
  "special/phone-nan.yaml": "phone_number: \"+2\"\ninbound_agent_id: a\ninbound_agent_version: .nan\n",
  "special/broken.json": "{\n  \"agent_id\": \"x\",,\n}\n",
  "special/logo.json": Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"),
  "special/package.json": "{\n  \"dependencies\": { \"retell-client-js-sdk\": \"^2.0.0\" }\n}\n",
  "svc-lint.suppressions.yaml": [
    "suppressions:",
    "  - rule: phone-number-single-agent-fields",
    "    files: [\"special/phones/*.json\"]",
    "    path: $.inbound_agent_id",
    "    reason: carrier cut-over, TICKET-9",
    "  - rule: calendar-cal-tools",
    "    files: [\"nothing/**\"]",
    "    reason: unused on purpose",
    ""
  ].join("\n")
}

const CONFIGS: ReadonlyArray<unknown> = [
  undefined,
  { rules: { "conversation-node-tools": "error", "suppression-unused": "off" } },
  { upcomingDays: 400, overrides: [{ files: ["corpus/team-01/**"], rules: { "agent-language-multi": "note" } }] }
]

interface Options {
  readonly asOf: string
  readonly config: unknown
  readonly cache?: {
    readonly location: string
    readonly now: number
    readonly memory?: LintCacheMemory.Memory
    readonly beforeSave?: () => void
  }
}

/** One run as `svc-lint` does it (check.ts), rendered in every format. */
const run = async (dir: string, options: Options) => {
  const configFile = path.join(dir, "svc-lint.config.json")
  const config = options.config === undefined ? LintConfig.empty(dir) : LintConfig.decode(configFile, options.config)
  const suppressionsPath = path.join(dir, "svc-lint.suppressions.yaml")
  const suppressions = await SuppressionsFile.load(dir, suppressionsPath, config)
  const at = utcMidnight(options.asOf)
  const ctx: LintContext = {
    at,
    upcomingUntil: upcomingUntil(at, config.upcomingDays ?? 30),
    config,
    integrations: { legacySipHosts: defaultLegacySipHosts, legacyMcpHosts: [] },
    maxFileSize: 20 * 1024 * 1024,
    fileSuppressions: suppressions.entries,
    inlineSuppressions: true
  }
  // The resident linter's order (Daemon.ts): the watch's barrier, then the walk, which watches.
  const memory = options.cache?.memory
  await memory?.watch?.sync()
  const found = discover(["."], {
    cwd: dir,
    ignored: () => false,
    sourceExtensions: new Set(defaultSourceExtensions),
    onFolder: memory?.watch?.folder
  })
  let state: LintCache.CacheState | undefined
  let lint
  if (options.cache === undefined) lint = lintAll(ctx, found.files)
  else {
    const key = LintCache.runKey({
      cwd: dir,
      ctx,
      suppressions: { path: suppressionsPath, bytes: fs.readFileSync(suppressionsPath) }
    })
    state = LintCache.open(options.cache.location, dir, key, memory)
    lint = LintCache.lintAll(ctx, found.files, state, options.cache.now)
    options.cache.beforeSave?.()
    assert.strictEqual(LintCache.save(state, memory), undefined)
  }
  const problems: Array<Problem> = [...lint.problems]
  for (const s of found.skipped) {
    const p = skippedProblem(config, dir, s)
    if (p !== undefined) problems.push(p)
  }
  problems.push(...suppressions.problems)
  problems.push(...SuppressionsFile.entryProblems(dir, suppressions, config, lint.usedEntries, at, ctx.upcomingUntil))
  problems.sort(compare)
  const report: Report = {
    version: "0.0.0",
    asOf: options.asOf,
    failOn: "error",
    problems,
    files: found.files.length,
    suppressed: lint.suppressed,
    baselined: 0,
    fixed: 0
  }
  const text = [
    stylish(report, { color: false }),
    json(report, { color: false }),
    sarif(report, { color: false }),
    github(report, { color: false }),
    junit(report, { color: false })
  ].join("\n---\n")
  return { text, state, files: found.files.length, problems: problems.length }
}

/** A copy of `dir`'s corpus file edited so that its problems change or stay. */
const edit = (rnd: () => number, file: string) => {
  const text = fs.readFileSync(file, "utf8")
  const r = rnd()
  if (r < 0.3 && text.includes("en-US")) fs.writeFileSync(file, text.replace("en-US", "multi"))
  else if (r < 0.5 && file.endsWith(".yaml")) fs.writeFileSync(file, `${text}analysis_summary_prompt: summarise\n`)
  else if (r < 0.7) fs.writeFileSync(file, text.replace("\n", "\n\n")) // same findings, other lines
  else fs.writeFileSync(file, `${text} `) // trailing space: same problems, new bytes
}

const allFiles = (dir: string): Array<string> => {
  const out: Array<string> = []
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(p)
    }
  }
  walk(path.join(dir, "corpus"))
  return out.sort()
}

describe("LintCache", () => {
  it("reports byte for byte what an uncached run reports over 2,000 files and random edits", async () => {
    const dir = tempDir()
    writeCorpus(dir, { configs: 1_880, sources: 110, seed: 17 })
    writeTree(dir, SPECIAL)
    const location = path.join(tempDir(), "lint-cache")
    const rnd = mulberry32(2026)
    // `now` far after every write: stats are trusted, so the fast path is what is being compared.
    // Every edit below changes the file's size or ctime (the racy case has its own test).
    const now = Date.now() + 3_600_000
    let asOf = "2026-11-01"
    let config: unknown = undefined
    const plan = [
      "first",
      "unchanged",
      "edits",
      "edits",
      "delete-add",
      "config",
      "edits",
      "as-of",
      "config",
      "edits",
      "delete-add",
      "unchanged"
    ]
    let rounds = 0
    for (const step of plan) {
      let expectedMisses: number | "all" = 0
      const files = allFiles(dir)
      if (step === "edits") {
        const picked = new Set(
          Array.from({ length: 1 + Math.floor(rnd() * 20) }, () => files[Math.floor(rnd() * files.length)]!)
        )
        for (const file of picked) edit(rnd, file)
        expectedMisses = picked.size
      } else if (step === "delete-add") {
        for (let i = 0; i < 5; i++) fs.rmSync(files[Math.floor(rnd() * files.length)]!, { force: true })
        const fresh = path.join(dir, "corpus", `added-${rounds}`)
        writeCorpus(fresh, { configs: 7, sources: 3, seed: rounds })
        expectedMisses = 10
      } else if (step === "config") {
        config = CONFIGS[(CONFIGS.indexOf(config) + 1) % CONFIGS.length]
        expectedMisses = "all"
      } else if (step === "as-of") {
        asOf = "2026-06-20"
        expectedMisses = "all"
      } else if (step === "first") expectedMisses = "all"

      const plain = await run(dir, { asOf, config })
      const cached = await run(dir, { asOf, config, cache: { location, now } })
      assert.strictEqual(cached.text, plain.text, `round ${rounds} (${step}): cached report differs`)
      assert.isAbove(plain.problems, 100)
      const state = cached.state!
      // Binary and unreadable files are never stored; the .nan fix cannot be, so both are linted every time.
      const uncachable = 2
      if (expectedMisses === "all") assert.strictEqual(state.misses, plain.files, `round ${rounds} (${step})`)
      else assert.strictEqual(state.misses, expectedMisses + uncachable, `round ${rounds} (${step}) misses`)
      assert.strictEqual(state.hits + state.misses, plain.files)
      rounds++
    }
    assert.isAtLeast(plan.length, 10)
  }, 600_000)

  it(
    "in the resident linter (memory and folder watch) reports what an uncached run reports, skipping unchanged files' stat",
    async () => {
      const dir = tempDir()
      writeCorpus(dir, { configs: 600, sources: 40, seed: 5 })
      writeTree(dir, SPECIAL)
      const location = path.join(tempDir(), "lint-cache")
      const watch = FileWatch.make(tempDir())!
      let vouched = 0
      const memory = LintCacheMemory.make({
        ...watch,
        trusted: (file) => {
          const answer = watch.trusted(file)
          if (answer) vouched++
          return answer
        }
      })
      const rnd = mulberry32(7)
      const now = Date.now() + 3_600_000
      const uncachable = 2
      for (
        const [round, step] of ["first", "unchanged", "edits", "same size and mtime", "edits", "unchanged"].entries()
      ) {
        const files = allFiles(dir).filter((f) => f.endsWith(".json") || f.endsWith(".yaml"))
        let changed = 0
        if (step === "edits") {
          const picked = new Set(Array.from({ length: 10 }, () => files[Math.floor(rnd() * files.length)]!))
          for (const file of picked) edit(rnd, file)
          changed = picked.size
        } else if (step === "same size and mtime") {
          // What git's checkout of an older tree or `cp -p` can do: other bytes of the same length and
          // the old mtime. Only ctime (and the watch's event) tells.
          const picked = new Set(Array.from({ length: 10 }, () => files[Math.floor(rnd() * files.length)]!))
          for (const file of picked) {
            const before = fs.statSync(file)
            const text = fs.readFileSync(file, "utf8")
            const swapped = text.includes("en-US") ? text.replace("en-US", "multi") : text.replace("multi", "en-US")
            const other = swapped !== text ? swapped : `${text.slice(0, -1)}${text.endsWith(" ") ? "\t" : " "}`
            assert.strictEqual(other.length, text.length)
            assert.notStrictEqual(other, text)
            fs.writeFileSync(file, other)
            fs.utimesSync(file, before.atime, before.mtime)
          }
          changed = picked.size
        }
        vouched = 0
        const plain = await run(dir, { asOf: "2026-11-01", config: undefined })
        const resident = await run(dir, { asOf: "2026-11-01", config: undefined, cache: { location, now, memory } })
        assert.strictEqual(resident.text, plain.text, `round ${round} (${step})`)
        const state = resident.state!
        if (step === "first") assert.strictEqual(state.misses, plain.files)
        else {
          assert.strictEqual(state.misses, changed + uncachable, `round ${round} (${step}) misses`)
          // Every unchanged file the watch could see was taken without a stat (the run before checked it).
          assert.isAtLeast(vouched, plain.files - changed - uncachable - 20, `round ${round} (${step}) vouched`)
        }
      }
      watch.close()
    },
    300_000
  )

  it(
    "appends a run's few changes as a journal line, rewrites past a share, and skips a torn or foreign line",
    async () => {
      const dir = project(SPECIAL)
      writeCorpus(dir, { configs: 1_150, sources: 10, seed: 3 })
      const location = path.join(tempDir(), "cache")
      const now = Date.now() + 3_600_000
      const lines = () => fs.readFileSync(location, "utf8").split("\n").filter((l) => l !== "")
      const same = async (label: string) => {
        const plain = await run(dir, { asOf: "2026-11-01", config: undefined })
        const cached = await run(dir, { asOf: "2026-11-01", config: undefined, cache: { location, now } })
        assert.strictEqual(cached.text, plain.text, label)
        return cached.state!
      }
      await same("first")
      assert.strictEqual(lines().length, 2, "a first run writes the header and the body")
      const files = allFiles(dir)
      fs.appendFileSync(files[0]!, " ")
      fs.rmSync(files[1]!)
      const second = await same("one edit, one delete")
      assert.strictEqual(second.misses, 1 + 2)
      assert.strictEqual(lines().length, 3, "the changes went into one journal line")
      assert.match(lines()[2]!, /^\S+ \[\[/)
      const reloaded = LintCache.load(location, second.key)
      assert.strictEqual(reloaded.status, "loaded")
      assert.deepStrictEqual(reloaded.entries, second.next, "body plus journal is what the run kept")

      // A line torn by a crash, and one chained to another file's body, are skipped; the rest applies.
      const good = fs.readFileSync(location, "utf8")
      fs.appendFileSync(files[2]!, " ")
      await same("another edit")
      const withThird = fs.readFileSync(location, "utf8")
      const third = withThird.slice(good.length)
      fs.writeFileSync(location, `${good}${third.slice(0, third.length / 2)}\n`)
      const torn = await same("after a torn line")
      assert.strictEqual(torn.misses, 1 + 2, "the torn line's entry is linted again, nothing else")
      const foreign = `${"A".repeat(43)}= ${third.slice(third.indexOf(" ") + 1)}`
      fs.writeFileSync(location, `${good}${foreign}`)
      const skipped = await same("after a foreign line")
      assert.strictEqual(skipped.misses, 1 + 2)

      // Changes past the share: the whole file is rewritten; a cache deleted meanwhile is written whole.
      for (const file of allFiles(dir).slice(0, 1_100)) fs.appendFileSync(file, " ")
      await same("1,100 edits")
      assert.strictEqual(lines().length, 2, "a long journal is folded into a rewrite")
      fs.appendFileSync(files[3]!, " ")
      const plain = await run(dir, { asOf: "2026-11-01", config: undefined })
      const gone = await run(dir, {
        asOf: "2026-11-01",
        config: undefined,
        cache: { location, now, beforeSave: () => fs.rmSync(location) }
      })
      assert.strictEqual(gone.text, plain.text)
      assert.strictEqual(lines().length, 2, "a cache deleted during the run is written whole")
      const after = LintCache.load(location, gone.state!.key)
      assert.strictEqual(after.status, "loaded")
      assert.deepStrictEqual(after.entries, gone.state!.next)
    },
    300_000
  )

  it("ignores and rewrites a corrupt, truncated, tampered or foreign cache file", async () => {
    const dir = project(SPECIAL)
    writeCorpus(dir, { configs: 40, sources: 5 })
    const location = path.join(dir, ".svc-lint-cache")
    const now = Date.now() + 3_600_000
    const plain = await run(dir, { asOf: "2026-11-01", config: undefined })
    const first = await run(dir, { asOf: "2026-11-01", config: undefined, cache: { location, now } })
    assert.strictEqual(first.state!.status, "missing")
    const good = fs.readFileSync(location, "utf8")
    const newline = good.indexOf("\n")
    const damaged: Record<string, { readonly text: string; readonly status: LintCache.LoadStatus }> = {
      garbage: { text: "\u0000\u0001 not a cache", status: "corrupt" },
      empty: { text: "", status: "corrupt" },
      truncated: { text: good.slice(0, Math.floor(good.length / 2)), status: "corrupt" },
      // a problem's message changed in place: the checksum no longer matches
      tampered: { text: good.replace("\"level\":\"error\"", "\"level\":\"note\""), status: "corrupt" },
      "bad header": { text: `{"format":${good.slice(newline)}`, status: "corrupt" },
      "other version": { text: good.replace("\"version\":2", "\"version\":999"), status: "foreign" },
      "other tool": { text: "{\"format\":\"eslint\"}\n[]", status: "foreign" },
      "other run key": { text: good.replace(/"key":"[^"]+"/, "\"key\":\"x\""), status: "stale" }
    }
    assert.notStrictEqual(damaged["tampered"]!.text, good)
    for (const [name, { status, text }] of Object.entries(damaged)) {
      fs.writeFileSync(location, text)
      const again = await run(dir, { asOf: "2026-11-01", config: undefined, cache: { location, now } })
      assert.strictEqual(again.state!.status, status, name)
      assert.strictEqual(again.text, plain.text, name)
      assert.strictEqual(again.state!.hits, 0, name)
      assert.strictEqual(LintCache.load(location, again.state!.key).status, "loaded", `${name}: rewritten`)
    }
  })

  it("drops the entries of deleted files and keeps those of existing files the run did not visit", async () => {
    const dir = project({ "a/one.json": "{\"language\": \"multi\"}\n", "b/two.json": "{\"language\": \"multi\"}\n" })
    const location = path.join(tempDir(), "cache")
    const ctx: LintContext = {
      at: utcMidnight("2026-11-01"),
      upcomingUntil: utcMidnight("2026-12-01"),
      config: LintConfig.empty(dir),
      integrations: { legacySipHosts: defaultLegacySipHosts, legacyMcpHosts: [] },
      maxFileSize: 1024 * 1024,
      fileSuppressions: [],
      inlineSuppressions: true
    }
    const key = LintCache.runKey({ cwd: dir, ctx, suppressions: undefined })
    const lintOnly = (inputs: Array<string>) => {
      const found = discover(inputs, { cwd: dir, ignored: () => false, sourceExtensions: new Set() })
      const state = LintCache.open(location, dir, key)
      const result = LintCache.lintAll(ctx, found.files, state, Date.now() + 3_600_000)
      LintCache.save(state)
      return { state, result }
    }
    lintOnly(["."])
    assert.deepStrictEqual([...LintCache.load(location, key).entries.keys()], ["a/one.json", "b/two.json"])
    // a run over a/ only keeps b's entry
    const partial = lintOnly(["a"])
    assert.strictEqual(partial.state.hits, 1)
    assert.deepStrictEqual([...LintCache.load(location, key).entries.keys()], ["a/one.json", "b/two.json"])
    fs.rmSync(path.join(dir, "b"), { recursive: true })
    lintOnly(["a"])
    assert.deepStrictEqual([...LintCache.load(location, key).entries.keys()], ["a/one.json"])
  })

  it("checks the bytes of a file changed within the timestamp tick of its last read", async () => {
    const dir = project({ "agent.json": "{\"agent_id\": \"a\", \"language\": \"en-US\"}\n" })
    const location = path.join(tempDir(), "cache")
    const file = path.join(dir, "agent.json")
    const now = Date.now()
    const first = await runSmall(dir, location, now)
    assert.strictEqual(first.problems, 0)
    // Same size, same mtime restored: only the bytes (and ctime) differ.
    const { mtime } = fs.statSync(file)
    fs.writeFileSync(file, "{\"agent_id\": \"a\", \"language\": \"multi\"}\n")
    fs.utimesSync(file, mtime, mtime)
    const entry = LintCache.load(location, first.key).entries.get("agent.json")!
    // written just now, so the entry holds no stat and the next run compares hashes
    assert.strictEqual(entry[2], -1)
    const second = await runSmall(dir, location, now)
    assert.strictEqual(second.problems, 1)
  })

  it("notices a same-size edit with the mtime put back on a file whose stat it trusts (ctime moves)", async () => {
    const dir = project({ "agent.json": "{\"agent_id\": \"a\", \"language\": \"en-US\"}\n" })
    const location = path.join(tempDir(), "cache")
    const file = path.join(dir, "agent.json")
    const later = Date.now() + 3_600_000
    const first = await runSmall(dir, location, later)
    assert.strictEqual(first.problems, 0)
    assert.isAbove(LintCache.load(location, first.key).entries.get("agent.json")![2], 0)
    const { mtime } = fs.statSync(file)
    await untilCtimeAfter(file)
    fs.writeFileSync(file, "{\"agent_id\": \"a\", \"language\": \"multi\"}\n")
    fs.utimesSync(file, mtime, mtime)
    const second = await runSmall(dir, location, later)
    assert.strictEqual(second.problems, 1)
  })

  it("hashes the sources it runs from, so editing a rule invalidates every entry", () => {
    const dir = project({ "src/Rule.ts": "export const x = 1\n", "domain/Engine.ts": "export const y = 2\n" })
    const roots = [path.join(dir, "src"), path.join(dir, "domain")]
    const before = hashSources(roots)
    assert.strictEqual(hashSources(roots), before)
    fs.writeFileSync(path.join(dir, "domain", "Engine.ts"), "export const y = 3\n")
    assert.notStrictEqual(hashSources(roots), before)
  })

  it("takes a folder or a file as --cache-location", () => {
    const dir = tempDir()
    assert.strictEqual(LintCache.resolveLocation(dir, undefined), path.join(dir, ".svc-lint-cache"))
    assert.strictEqual(LintCache.resolveLocation(dir, "."), path.join(dir, ".svc-lint-cache"))
    assert.strictEqual(LintCache.resolveLocation(dir, "new/"), path.join(dir, "new", ".svc-lint-cache"))
    assert.strictEqual(LintCache.resolveLocation(dir, "new/cache.json"), path.join(dir, "new", "cache.json"))
  })
})

/**
 * Waits until a write made now gets a later ctime than `file` has: the kernel stamps writes from a coarse clock
 * (a few ms a tick), so a write right after another can carry the same ctime. Probes a file of its own on the same
 * file system between turns of the event loop; bounded, and says what it saw. (A fixed 20 ms sleep once stood for
 * this.)
 */
const untilCtimeAfter = async (file: string) => {
  const before = fs.statSync(file, { bigint: true }).ctimeNs
  const probe = path.join(tempDir(), "tick")
  const deadline = Date.now() + 10_000
  for (;;) {
    fs.writeFileSync(probe, "")
    const now = fs.statSync(probe, { bigint: true }).ctimeNs
    if (now > before) return
    if (Date.now() > deadline) assert.fail(`the file system's clock stood at ${now} ns for 10 s (file: ${before} ns)`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

const runSmall = async (dir: string, location: string, now: number) => {
  const ctx: LintContext = {
    at: utcMidnight("2026-11-01"),
    upcomingUntil: utcMidnight("2026-12-01"),
    config: LintConfig.empty(dir),
    integrations: { legacySipHosts: defaultLegacySipHosts, legacyMcpHosts: [] },
    maxFileSize: 1024 * 1024,
    fileSuppressions: [],
    inlineSuppressions: true
  }
  const key = LintCache.runKey({ cwd: dir, ctx, suppressions: undefined })
  const found = discover(["."], { cwd: dir, ignored: () => false, sourceExtensions: new Set() })
  const state = LintCache.open(location, dir, key)
  const result = LintCache.lintAll(ctx, found.files, state, now)
  LintCache.save(state)
  return { key, problems: result.problems.length }
}
