/**
 * `svc-test` (decision 0705): runs scripted test-case definitions from YAML or JSON files against a custom-LLM
 * WebSocket URL, with no server or database (`@svc/agent-test`'s runner, in process), and reports in text, JSON,
 * JUnit XML or SARIF 2.1.0. Exit codes (decision 0705): 0 every test passed, 1 a test failed or ended in error (the
 * agent is broken), 2 the run itself could not happen (usage, unreadable or invalid file, no URL).
 *
 * A file holds one definition, an array of them, or `{tests: [...]}`; a definition is the API's scripted shape
 * without `type` and `response_engine` (both implied): `name`, `user_turns`, `assertions`, `dynamic_variables?`.
 */
import { Runner } from "@svc/agent-test"
import { CreateScriptedDefinition } from "@svc/domain/batchTests/TestCaseDefinition.ts"
import type { Verdict } from "@svc/domain/batchTests/Verdict.ts"
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import { requestParseOptions } from "@svc/domain/models/RequestDecoding.ts"
import { Clock, Effect, Result, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse as parseYaml } from "yaml"

/** @category models */
export type Format = "text" | "json" | "junit" | "sarif"

/** @category models */
export interface Options {
  readonly url: string | undefined
  readonly format: Format
  readonly replyTimeoutMs: number
  readonly files: ReadonlyArray<string>
}

/** One test's outcome. @category models */
export interface TestResult {
  readonly file: string
  readonly name: string
  readonly verdict: Verdict
  readonly durationMs: number
}

class UsageError {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const usage = "usage: svc-test --url ws://HOST:PORT/PATH [--format text|json|junit|sarif] " +
  "[--reply-timeout-ms N] FILE..."

/** Parses argv (after the program name). @category constructors */
export const parseArgs = (argv: ReadonlyArray<string>): Options | UsageError => {
  let url: string | undefined
  let format: Format = "text"
  let replyTimeoutMs = Runner.defaults.replyTimeoutMs
  const files: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = () => argv[++i]
    if (arg === "--url") url = value()
    else if (arg === "--format") {
      const f = value()
      if (f !== "text" && f !== "json" && f !== "junit" && f !== "sarif") {
        return new UsageError(`--format must be text, json, junit or sarif (got ${JSON.stringify(f)})\n${usage}`)
      }
      format = f
    } else if (arg === "--reply-timeout-ms") {
      const n = Number(value())
      if (!Number.isInteger(n) || n < 1) return new UsageError(`--reply-timeout-ms must be an integer >= 1\n${usage}`)
      replyTimeoutMs = n
    } else if (arg.startsWith("--")) return new UsageError(`unknown option ${arg}\n${usage}`)
    else files.push(arg)
  }
  if (files.length === 0) return new UsageError(`no test files given\n${usage}`)
  return { url, format, replyTimeoutMs, files }
}

interface Loaded {
  readonly file: string
  readonly name: string
  readonly url: string
  readonly definition: typeof CreateScriptedDefinition.Type
}

const decode = Schema.decodeUnknownResult(CreateScriptedDefinition)

/** Reads and validates every definition of every file; the first problem is a usage error naming file and field. */
const load = (options: Options): Array<Loaded> | UsageError => {
  const loaded: Array<Loaded> = []
  for (const file of options.files) {
    let text: string
    try {
      text = fs.readFileSync(file, "utf8")
    } catch (error) {
      return new UsageError(`${file}: cannot read (${(error as Error).message})`)
    }
    let value: unknown
    try {
      value = file.endsWith(".json") ? JSON.parse(text) : parseYaml(text)
    } catch (error) {
      return new UsageError(
        `${file}: not valid ${file.endsWith(".json") ? "JSON" : "YAML"} (${(error as Error).message})`
      )
    }
    const list = Array.isArray(value)
      ? value
      : typeof value === "object" && value !== null && "tests" in value && Array.isArray(value.tests)
      ? value.tests as Array<unknown>
      : [value]
    for (const [index, item] of list.entries()) {
      const url = options.url
      if (url === undefined) return new UsageError(`no --url given\n${usage}`)
      const input = {
        type: "scripted",
        response_engine: { type: "custom-llm", llm_websocket_url: url },
        ...(typeof item === "object" && item !== null ? item : {})
      }
      const result = decode(input, { ...requestParseOptions, reportInput: true })
      if (Result.isFailure(result)) {
        return new UsageError(`${file}: test ${index}: ${formatDecodeError(result.failure, { input, root: "test" })}`)
      }
      loaded.push({ file, name: result.success.name, url, definition: result.success })
    }
  }
  return loaded
}

const xml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The report in `format`. @category encoding */
export const report = (results: ReadonlyArray<TestResult>, format: Format): string => {
  const count = (s: Verdict["status"]) => results.filter((r) => r.verdict.status === s).length
  switch (format) {
    case "text":
      return results.map((r) =>
        `${r.verdict.status.toUpperCase().padEnd(5)} ${r.file}: ${r.name}${
          r.verdict.status === "pass" ? "" : `\n      ${r.verdict.explanation}`
        }`
      ).join("\n") +
        `\n\n${results.length} tests: ${count("pass")} passed, ${count("fail")} failed, ${count("error")} errored\n`
    case "json":
      return JSON.stringify(
        {
          total: results.length,
          pass: count("pass"),
          fail: count("fail"),
          error: count("error"),
          tests: results.map((r) => ({
            file: r.file,
            name: r.name,
            status: r.verdict.status,
            explanation: r.verdict.explanation,
            duration_ms: r.durationMs
          }))
        },
        null,
        2
      ) + "\n"
    case "junit": {
      const cases = results.map((r) => {
        const open = `    <testcase classname="${xml(r.file)}" name="${xml(r.name)}" time="${
          (r.durationMs / 1000).toFixed(3)
        }"`
        if (r.verdict.status === "pass") return `${open}/>`
        const tag = r.verdict.status === "fail" ? "failure" : "error"
        return `${open}>\n      <${tag} message="${xml(r.verdict.explanation)}"/>\n    </testcase>`
      })
      return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="${results.length}" failures="${
        count("fail")
      }" errors="${count("error")}">\n  <testsuite name="svc-test" tests="${results.length}" failures="${
        count("fail")
      }" errors="${count("error")}">\n${cases.join("\n")}\n  </testsuite>\n</testsuites>\n`
    }
    case "sarif":
      return JSON.stringify(
        {
          $schema: "https://json.schemastore.org/sarif-2.1.0.json",
          version: "2.1.0",
          runs: [{
            tool: {
              driver: {
                name: "svc-test",
                informationUri: "https://github.com/svc/docs/testing-agents.md",
                rules: [
                  { id: "test-failed", shortDescription: { text: "A scripted test case's assertion failed" } },
                  { id: "test-error", shortDescription: { text: "A scripted test case broke the custom-LLM protocol" } }
                ]
              }
            },
            results: results.filter((r) => r.verdict.status !== "pass").map((r) => ({
              ruleId: r.verdict.status === "fail" ? "test-failed" : "test-error",
              level: "error",
              message: { text: `${r.name}: ${r.verdict.explanation}` },
              locations: [{ physicalLocation: { artifactLocation: { uri: r.file.split(path.sep).join("/") } } }]
            }))
          }]
        },
        null,
        2
      ) + "\n"
  }
}

/**
 * Runs `argv`; returns the text to print and the exit code.
 *
 * @category constructors
 */
export const run = (
  argv: ReadonlyArray<string>
): Effect.Effect<{ readonly out: string; readonly err: string; readonly code: 0 | 1 | 2 }> =>
  Effect.gen(function*() {
    const options = parseArgs(argv)
    if (options instanceof UsageError) return { out: "", err: `svc-test: ${options.message}\n`, code: 2 as const }
    const loaded = load(options)
    if (loaded instanceof UsageError) return { out: "", err: `svc-test: ${loaded.message}\n`, code: 2 as const }
    const runnerOptions = { ...Runner.defaults, replyTimeoutMs: options.replyTimeoutMs }
    // one at a time, in file order: the report is the same order every run (decision 0705)
    const results = yield* Effect.forEach(loaded, (test, index) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const outcome = yield* Runner.runScripted(
          test.url,
          `svc_test_${index + 1}`,
          { ...test.definition, dynamic_variables: test.definition.dynamic_variables ?? {} },
          runnerOptions
        )
        const durationMs = (yield* Clock.currentTimeMillis) - started
        return { file: test.file, name: test.name, verdict: outcome.verdict, durationMs }
      }))
    const failed = results.some((r) => r.verdict.status !== "pass")
    return { out: report(results, options.format), err: "", code: failed ? 1 as const : 0 as const }
  })
