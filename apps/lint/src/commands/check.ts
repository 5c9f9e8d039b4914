/**
 * `svc-lint [paths or globs...]`: the root command. Finds the files, lints them as of the
 * `--as-of` date, applies suppressions and the baseline, optionally fixes, renders each requested
 * format and sets the exit code (0 clean, 1 problems at or above `--fail-on`, 2 usage/config error).
 */
import { Clock, Config, Console, Effect, Option } from "effect"
import { Argument, Flag } from "effect/cli"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { LintCacheMemory } from "../cache/LintCacheMemory.ts"
import { defaultSourceExtensions, discover, type Discovery, type InputFile } from "../files/Discovery.ts"
import { compileAll } from "../files/Glob.ts"
import { failing, type Report } from "../reporters/Report.ts"
import type { Level } from "../rules/Level.ts"
import { lintAll, type LintContext, skippedProblem, upcomingUntil } from "../rules/Linter.ts"
import { compare, type Problem } from "../rules/Problem.ts"
import { defaultLegacySipHosts } from "../rules/SourcePatterns.ts"
import * as Baseline from "../suppressions/Baseline.ts"
import * as SuppressionsFile from "../suppressions/SuppressionsFile.ts"
import * as AsOf from "./AsOf.ts"
import { LintFailed, UsageError } from "./Exit.ts"
import * as LintConfig from "./LintConfig.ts"
import { CurrentOutput } from "./Output.ts"
import { VERSION } from "./Version.ts"

export const formats = ["stylish", "json", "sarif", "github", "junit"] as const
export type Format = (typeof formats)[number]

const MIB = 1024 * 1024

/** The flags of the root command. */
export const checkConfig = {
  paths: Argument.String("paths").pipe(
    Argument.withDescription("Files, folders or globs to lint (default: the current folder)"),
    Argument.variadic()
  ),
  asOf: AsOf.asOfFlag,
  upcomingDays: Flag.Int("upcoming-days").pipe(
    Flag.withDescription("Report rules whose first date is within this many days as notes (default 30)"),
    Flag.optional
  ),
  failOn: Flag.Literals("fail-on", ["error", "warning", "note"]).pipe(
    Flag.withDescription("Exit with 1 when a problem is at or above this level (default error)"),
    Flag.optional
  ),
  format: Flag.Literals("format", formats).pipe(
    Flag.withAlias("f"),
    Flag.withDescription("Output format; repeat for several (stylish, json, sarif, github, junit)"),
    Flag.atLeast(0)
  ),
  output: Flag.String("output").pipe(
    Flag.withAlias("o"),
    Flag.withDescription("FORMAT=FILE writes that format to FILE (repeatable); FILE alone for a single format"),
    Flag.atLeast(0)
  ),
  ignore: Flag.String("ignore").pipe(
    Flag.withDescription("Glob of paths to skip (repeatable), relative to the current folder"),
    Flag.atLeast(0)
  ),
  ext: Flag.String("ext").pipe(
    Flag.withDescription("Another source-file extension to scan, e.g. .kt (repeatable)"),
    Flag.atLeast(0)
  ),
  allowEmpty: Flag.Boolean("allow-empty").pipe(
    Flag.withDescription("Do not fail when a path or glob matches no file"),
    Flag.withDefault(false)
  ),
  fix: Flag.Boolean("fix").pipe(
    Flag.withDescription("Apply the safe mechanical migrations in place"),
    Flag.withDefault(false)
  ),
  fixDryRun: Flag.Boolean("fix-dry-run").pipe(
    Flag.withDescription("Print the diff --fix would apply; change nothing"),
    Flag.withDefault(false)
  ),
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription("Config file (default: svc-lint.config.(json|yaml) found upward)"),
    Flag.optional
  ),
  suppressions: Flag.String("suppressions").pipe(
    Flag.withDescription("Suppressions file for config documents"),
    Flag.optional
  ),
  baseline: Flag.String("baseline").pipe(
    Flag.withDescription("Baseline file: its problems are not reported"),
    Flag.optional
  ),
  updateBaseline: Flag.Boolean("update-baseline").pipe(
    Flag.withDescription("Write every current problem to the --baseline file and exit 0"),
    Flag.withDefault(false)
  ),
  maxFileSize: Flag.Int("max-file-size").pipe(
    Flag.withDescription("Skip files larger than this many MiB (default 20)"),
    Flag.withDefault(20)
  ),
  cache: Flag.Boolean("cache").pipe(
    Flag.withDescription("Re-check only the files that changed since the last --cache run (same results)"),
    Flag.withDefault(false)
  ),
  cacheLocation: Flag.String("cache-location").pipe(
    Flag.withDescription("Cache file, or a folder to hold .svc-lint-cache (default: .svc-lint-cache here)"),
    Flag.optional
  ),
  daemon: Flag.Boolean("daemon").pipe(
    Flag.withDescription(
      "Run in this folder's resident svc-lint (started on first use, stopped after 15 idle minutes): same report, " +
        "without the start-up (the svc-lint bin)"
    ),
    Flag.withDefault(false)
  ),
  daemonStop: Flag.Boolean("daemon-stop").pipe(
    Flag.withDescription("Stop this folder's resident svc-lint, if one runs, and exit (the svc-lint bin)"),
    Flag.withDefault(false)
  ),
  daemonStatus: Flag.Boolean("daemon-status").pipe(
    Flag.withDescription("Print this folder's resident svc-lint as JSON, if one runs, and exit (the svc-lint bin)"),
    Flag.withDefault(false)
  ),
  color: Flag.Boolean("color").pipe(
    Flag.withDescription("Colour the stylish output (default: when stdout is a terminal and NO_COLOR is unset)"),
    Flag.optional
  )
}

type CheckInput = {
  readonly paths: ReadonlyArray<string>
  readonly asOf: Option.Option<string>
  readonly upcomingDays: Option.Option<number>
  readonly failOn: Option.Option<Level>
  readonly format: ReadonlyArray<Format>
  readonly output: ReadonlyArray<string>
  readonly ignore: ReadonlyArray<string>
  readonly ext: ReadonlyArray<string>
  readonly allowEmpty: boolean
  readonly fix: boolean
  readonly fixDryRun: boolean
  readonly config: Option.Option<string>
  readonly suppressions: Option.Option<string>
  readonly baseline: Option.Option<string>
  readonly updateBaseline: boolean
  readonly maxFileSize: number
  readonly cache: boolean
  readonly cacheLocation: Option.Option<string>
  readonly daemon: boolean
  readonly daemonStop: boolean
  readonly daemonStatus: boolean
  readonly color: Option.Option<boolean>
}

const usage = (message: string) =>
  Effect.andThen(Console.error(`svc-lint: ${message}`), Effect.fail(new UsageError({ message })))

const attempt = <A>(f: () => A | Promise<A>): Effect.Effect<A, UsageError> =>
  Effect.tryPromise({
    try: async () => f(),
    catch: (error) => new UsageError({ message: error instanceof Error ? error.message : String(error) })
  }).pipe(Effect.tapError((error) => Console.error(`svc-lint: ${error.message}`)))

/** Where each format goes: `undefined` = stdout. */
export const resolveOutputs = (
  requested: ReadonlyArray<Format>,
  outputs: ReadonlyArray<string>
): { targets: Map<Format, string | undefined> } | { error: string } => {
  const targets = new Map<Format, string | undefined>()
  for (const f of requested) targets.set(f, undefined)
  const plain: Array<string> = []
  for (const o of outputs) {
    const match = /^([a-z]+)=(.+)$/.exec(o)
    if (match !== null && (formats as ReadonlyArray<string>).includes(match[1]!)) {
      targets.set(match[1] as Format, match[2]!)
    } else plain.push(o)
  }
  if (targets.size === 0) targets.set("stylish", undefined)
  if (plain.length > 0) {
    const open = [...targets].filter(([, file]) => file === undefined)
    if (plain.length > 1 || open.length !== 1) {
      return { error: "--output FILE needs exactly one format without a file; use --output FORMAT=FILE" }
    }
    targets.set(open[0]![0], plain[0])
  }
  const onStdout = [...targets].filter(([f, file]) => file === undefined && f !== "stylish" && f !== "github")
  if (onStdout.length > 1) {
    return {
      error: `${
        onStdout.map(([f]) => f).join(" and ")
      } cannot share stdout; write them to files with --output FORMAT=FILE`
    }
  }
  return { targets }
}

const loadReporter = async (format: Format) => {
  switch (format) {
    case "stylish":
      return (await import("../reporters/Stylish.ts")).stylish
    case "json":
      return (await import("../reporters/Json.ts")).json
    case "sarif":
      return (await import("../reporters/Sarif.ts")).sarif
    case "github":
      return (await import("../reporters/Github.ts")).github
    case "junit":
      return (await import("../reporters/Junit.ts")).junit
  }
}

const writeFile = (file: string, text: string) => {
  fs.mkdirSync(nodePath.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** What the lint-like commands (`svc-lint`, `timeline`) share: inputs, config and context. */
export interface Setup {
  readonly cwd: string
  readonly asOf: AsOf.AsOf
  readonly config: LintConfig.LintConfig
  readonly ctx: LintContext
  readonly found: Discovery
  readonly suppressions: SuppressionsFile.SuppressionsFile | undefined
}

/** Loads the config, walks the inputs and builds the lint context; fails with a usage error. */
export const prepare = Effect.fnUntraced(function*(input: {
  readonly paths: ReadonlyArray<string>
  readonly asOf: Option.Option<string>
  readonly upcomingDays: Option.Option<number>
  readonly ignore: ReadonlyArray<string>
  readonly ext: ReadonlyArray<string>
  readonly allowEmpty: boolean
  readonly config: Option.Option<string>
  readonly suppressions: Option.Option<string>
  readonly maxFileSize: number
}) {
  const cwd = process.cwd()
  const memory = yield* LintCacheMemory
  const asOf = yield* AsOf.resolve(input.asOf)
  const config = yield* attempt(() => LintConfig.load(cwd, Option.getOrUndefined(input.config)))
  const days = Option.getOrUndefined(input.upcomingDays) ?? config.upcomingDays ?? 30
  if (days < 0) return yield* usage("--upcoming-days must be 0 or more")
  if (input.maxFileSize <= 0) return yield* usage("--max-file-size must be at least 1 (MiB)")

  const cliIgnores = compileAll(input.ignore)
  const configIgnores = compileAll(config.ignores)
  const ignored = config.ignores.length === 0
    ? cliIgnores
    : (relative: string) =>
      cliIgnores(relative) ||
      configIgnores(nodePath.relative(config.dir, nodePath.resolve(cwd, relative)).split(nodePath.sep).join("/"))
  const sourceExtensions = new Set([
    ...defaultSourceExtensions,
    ...config.extensions,
    ...input.ext.map((e) => (e.startsWith(".") ? e : `.${e}`).toLowerCase())
  ])
  const inputs = input.paths.length === 0 ? ["."] : input.paths
  const found = discover(inputs, { cwd, ignored, sourceExtensions, onFolder: memory?.watch?.folder })
  if (!input.allowEmpty && found.unmatched.length > 0) {
    return yield* usage(
      `no files match ${found.unmatched.map((u) => `"${u}"`).join(", ")} (use --allow-empty to allow)`
    )
  }

  const suppressionsPath = Option.match(input.suppressions, {
    onNone: () => config.suppressions,
    onSome: (file) => nodePath.resolve(cwd, file)
  })
  const suppressions = suppressionsPath === undefined
    ? undefined
    : yield* attempt(() => SuppressionsFile.load(cwd, suppressionsPath, config))

  const ctx: LintContext = {
    at: asOf.at,
    upcomingUntil: upcomingUntil(asOf.at, days),
    config,
    integrations: {
      legacySipHosts: config.legacySipHosts ?? defaultLegacySipHosts,
      legacyMcpHosts: config.legacyMcpHosts
    },
    maxFileSize: input.maxFileSize * MIB,
    fileSuppressions: suppressions?.entries ?? [],
    inlineSuppressions: true
  }
  return { cwd, asOf, config, ctx, found, suppressions } satisfies Setup
})

/** Loads the cache of a `--cache` run, keyed by this run's context (LintCache.ts). */
const openCache = Effect.fnUntraced(function*(
  cwd: string,
  ctx: LintContext,
  suppressions: SuppressionsFile.SuppressionsFile | undefined,
  location: Option.Option<string>
) {
  const LintCache = yield* Effect.promise(() => import("../cache/LintCache.ts"))
  const now = yield* Clock.currentTimeMillis
  const suppressionsBytes = suppressions === undefined
    ? undefined
    : yield* attempt(() => ({ path: suppressions.path, bytes: fs.readFileSync(suppressions.path) }))
  const key = LintCache.runKey({ cwd, ctx, suppressions: suppressionsBytes })
  const memory = yield* LintCacheMemory
  const state = LintCache.open(LintCache.resolveLocation(cwd, Option.getOrUndefined(location)), cwd, key, memory)
  return { LintCache, state, now, memory }
})

/** The root command's handler. */
export const runCheck = Effect.fn("svc-lint.check")(function*(input: CheckInput) {
  // The bin answers these before a linter runs (bin/daemon-client.mjs); here there is no bin: a
  // run given --daemon simply runs, and stopping or asking for a resident linter needs the bin.
  if (input.daemonStop || input.daemonStatus) {
    return yield* usage(`${input.daemonStop ? "--daemon-stop" : "--daemon-status"} needs the svc-lint bin`)
  }
  const outputs = resolveOutputs(input.format, input.output)
  if ("error" in outputs) return yield* usage(outputs.error)
  if (input.fix && input.fixDryRun) return yield* usage("--fix and --fix-dry-run cannot be combined")
  if (input.fixDryRun && [...outputs.targets].some(([f, file]) => file === undefined && f !== "stylish")) {
    return yield* usage("--fix-dry-run prints the diff on stdout; write other formats with --output FORMAT=FILE")
  }
  const { asOf, config, ctx, cwd, found, suppressions } = yield* prepare(input)
  const failOn: Level = Option.getOrUndefined(input.failOn) ?? config.failOn ?? "error"
  const baselineFile = Option.getOrUndefined(input.baseline) ?? config.baseline
  if (input.updateBaseline && baselineFile === undefined) return yield* usage("--update-baseline needs --baseline FILE")

  if (!input.cache && Option.isSome(input.cacheLocation)) return yield* usage("--cache-location needs --cache")

  // --cache (decision 0630): unchanged files take their problems from the cache; the report is
  // byte for byte the one an uncached run prints.
  const cache = input.cache ? yield* openCache(cwd, ctx, suppressions, input.cacheLocation) : undefined
  const lint = cache === undefined
    ? (files: ReadonlyArray<InputFile>) => lintAll(ctx, files)
    : (files: ReadonlyArray<InputFile>) => cache.LintCache.lintAll(ctx, files, cache.state, cache.now)

  let run = lint(found.files)
  let fixed = 0
  if (input.fix || input.fixDryRun) {
    const { applyAll } = yield* Effect.promise(() => import("../documents/Fixer.ts"))
    const result = applyAll(cwd, run.problems, { write: input.fix })
    if (input.fixDryRun) {
      if (result.diff.length > 0) {
        const output = yield* CurrentOutput
        output.write(result.diff)
      }
    } else if (result.files.length > 0) {
      // Report what is left in the fixed files. Their bytes changed, so with --cache they are
      // linted again and their entries replaced.
      const again = lint(found.files.filter((f) => result.files.includes(f.relative)))
      const before = run.problems.length
      const rest = run.problems.filter((p) => !result.files.includes(p.file))
      run = { ...run, problems: [...rest, ...again.problems] }
      fixed = before - run.problems.length
    }
    for (const failure of result.failures) yield* Console.error(`svc-lint: not fixed: ${failure}`)
  }

  if (cache !== undefined) {
    const failure = cache.LintCache.save(cache.state, cache.memory)
    if (failure !== undefined) yield* Console.error(`svc-lint: warning: ${failure}`)
  }

  let problems: Array<Problem> = run.problems
  for (const s of found.skipped) {
    const p = skippedProblem(config, cwd, s)
    if (p !== undefined) problems.push(p)
  }
  if (suppressions !== undefined) {
    problems.push(...suppressions.problems)
    problems.push(
      ...SuppressionsFile.entryProblems(cwd, suppressions, config, run.usedEntries, ctx.at, ctx.upcomingUntil)
    )
  }
  problems.sort(compare)

  let baselined = 0
  if (baselineFile !== undefined) {
    const path = nodePath.resolve(cwd, baselineFile)
    if (input.updateBaseline) {
      yield* attempt(() => writeFile(path, Baseline.render(asOf.date, problems)))
      yield* Console.error(`svc-lint: wrote ${problems.length} problems to ${nodePath.relative(cwd, path) || path}`)
      return
    }
    if (!fs.existsSync(path)) {
      return yield* usage(`baseline file ${baselineFile} not found (create it with --update-baseline)`)
    }
    const entries = yield* attempt(() => Baseline.decode(JSON.parse(fs.readFileSync(path, "utf8"))))
    const applied = Baseline.apply(entries, problems)
    problems = applied.fresh
    baselined = applied.baselined
  }

  const report: Report = {
    version: VERSION,
    asOf: asOf.date,
    failOn,
    problems,
    files: found.files.length,
    suppressed: run.suppressed,
    baselined,
    fixed
  }
  const noColor = yield* Config.option(Config.String("NO_COLOR")).pipe(Effect.orElseSucceed(() => Option.none()))
  const stepSummaryFile = yield* Config.option(Config.String("GITHUB_STEP_SUMMARY")).pipe(
    Effect.orElseSucceed(() => Option.none<string>())
  )
  const output = yield* CurrentOutput
  const color = Option.getOrElse(
    input.color,
    () => output.isTTY && Option.getOrElse(noColor, () => "") === ""
  )
  for (const [format, file] of outputs.targets) {
    const reporter = yield* Effect.promise(() => loadReporter(format))
    const text = reporter(report, { color: file === undefined && color })
    if (file === undefined) yield* Effect.sync(() => output.write(text))
    else yield* attempt(() => writeFile(nodePath.resolve(cwd, file), text))
    if (format === "github" && Option.isSome(stepSummaryFile) && stepSummaryFile.value !== "") {
      const { stepSummary } = yield* Effect.promise(() => import("../reporters/Github.ts"))
      yield* attempt(() => fs.appendFileSync(stepSummaryFile.value, stepSummary(report)))
    }
  }
  const count = failing(report)
  if (count > 0) return yield* Effect.fail(new LintFailed({ failing: count }))
})
