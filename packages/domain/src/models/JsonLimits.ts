/**
 * The structural rules of every JSON value svc accepts from a caller (decision 0106),
 * and the one walk that checks them without recursion, so that no value, however deep, can exhaust the stack of the
 * process that reads it:
 *
 * - **Nesting**: objects and arrays nest at most {@link maxJsonDepth} (64) levels deep in a request body, the body's
 *   own object or array being the first. The same number bounds what the read path shows ({@link unreadableValue}):
 *   JSON.stringify, the encoder of every response, fails near 4,400 levels on Node 24's default stack, so 64 levels
 *   plus a response's envelope (list-calls adds 3) leave it a wide margin (JsonLimits.test.ts measures it).
 * - **Numbers**: every number lies within ±(2^53 − 1) ({@link maxJsonMagnitude}), the integers an IEEE 754 double
 *   (what a JSON number is to JavaScript, and to the vendor's TypeScript SDK) holds exactly (RFC 8259 §6, I-JSON
 *   RFC 7493 §2.2). A larger literal would be stored rounded, silently; it is refused instead, naming the field, so
 *   the caller sends it as a string.
 * - **Text** (decision 0011, checked here when asked): no string, value or key, holds a NUL (U+0000) or an unpaired
 *   surrogate.
 *
 * Pure and allocation-light: the walk keeps an explicit stack of the containers it is inside, and builds a path only
 * for the problem it reports.
 */

/**
 * The most levels objects and arrays may nest in a request body (the body's own object or array is level 1); the
 * same number bounds a stored free-form value on the read path. .NET's System.Text.Json has the same default
 * (`JsonSerializerOptions.MaxDepth`); the vendor documents none.
 *
 * @category models
 */
export const maxJsonDepth = 64

/**
 * The largest magnitude a JSON number may have: 2^53 − 1, above which integers are no longer exact as doubles.
 *
 * @category models
 */
export const maxJsonMagnitude = Number.MAX_SAFE_INTEGER

/** @category models */
export type JsonPath = ReadonlyArray<string | number>

/**
 * What breaks a rule, and where: `path` leads from the walked value to the offending value (for `depth`: the first
 * object or array past the limit); `inName` tells that the offending string is the name of the member at `path`.
 *
 * @category models
 */
export type JsonProblem =
  | { readonly rule: "depth"; readonly path: JsonPath }
  | { readonly rule: "number"; readonly path: JsonPath; readonly value: number }
  | { readonly rule: "text"; readonly path: JsonPath; readonly inName: boolean }

/** @category models */
export interface JsonWalkOptions {
  /** Levels of objects and arrays above the walked value in its document (a task of create-batch-call: 2). */
  readonly levelsAbove?: number
  /** The most levels allowed in the document; default {@link maxJsonDepth}. */
  readonly maxDepth?: number
  /** Whether strings are checked for NUL and unpaired surrogates too; default false. */
  readonly text?: boolean
  /** Whether numbers are checked against {@link maxJsonMagnitude}; default true. */
  readonly numbers?: boolean
}

const badText = (text: string) => text.includes("\u0000") || !text.isWellFormed()

const badNumber = (value: number) => !(Math.abs(value) <= maxJsonMagnitude)
const anyNumber = (_value: number) => false

interface Frame {
  readonly container: object
  /** The member names of an object; undefined for an array. */
  readonly keys: ReadonlyArray<string> | undefined
  readonly length: number
  index: number
  /** How the parent reaches this container. */
  readonly key: string | number | undefined
}

const pathOf = (stack: ReadonlyArray<Frame>, last: string | number): Array<string | number> => {
  const path: Array<string | number> = []
  // the first frame is the walked value itself, reached by no key
  for (let i = 1; i < stack.length; i++) path.push(stack[i]!.key!)
  path.push(last)
  return path
}

const frameOf = (container: object, key: string | number | undefined): Frame => {
  if (Array.isArray(container)) return { container, keys: undefined, length: container.length, index: 0, key }
  const keys = Object.keys(container)
  return { container, keys, length: keys.length, index: 0, key }
}

/**
 * The one walk: the members of the object or array `root`, depth first in document order, in constant stack. `visit`
 * sees each member's key (an index in an array, a name in an object), its value and the containers it is inside
 * (`root`'s frame first: the member's level below `root` is `stack.length`); a result other than undefined ends the
 * walk with it. An object or array value is walked into after its visit.
 */
const walk = <R>(
  root: object,
  visit: (stack: ReadonlyArray<Frame>, key: string | number, child: unknown) => R | undefined
): R | undefined => {
  const stack: Array<Frame> = [frameOf(root, undefined)]
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    if (frame.index >= frame.length) {
      stack.pop()
      continue
    }
    const at = frame.index++
    const key = frame.keys === undefined ? at : frame.keys[at]!
    const child = frame.keys === undefined
      ? (frame.container as ReadonlyArray<unknown>)[at]
      : (frame.container as Record<string, unknown>)[key]
    const found = visit(stack, key, child)
    if (found !== undefined) return found
    if (typeof child === "object" && child !== null) stack.push(frameOf(child, key))
  }
  return undefined
}

/**
 * The first value of `value` that breaks a rule, in document order (a member's name before its value), or undefined.
 * Iterative: a value nested a million levels deep is walked in constant stack.
 *
 * @category validation
 */
export const firstJsonProblem = (value: unknown, options: JsonWalkOptions = {}): JsonProblem | undefined => {
  const above = options.levelsAbove ?? 0
  const max = options.maxDepth ?? maxJsonDepth
  const text = options.text ?? false
  const refusesNumber = options.numbers === false ? anyNumber : badNumber
  if (typeof value === "string") return text && badText(value) ? { rule: "text", path: [], inName: false } : undefined
  if (typeof value === "number") return refusesNumber(value) ? { rule: "number", path: [], value } : undefined
  if (typeof value !== "object" || value === null) return undefined
  if (above + 1 > max) return { rule: "depth", path: [] }
  return walk<JsonProblem>(value, (stack, key, child) => {
    // a member's name (an array's index is a number) before its value
    if (text && typeof key === "string" && badText(key)) return { rule: "text", path: pathOf(stack, key), inName: true }
    if (typeof child === "string") {
      if (text && badText(child)) return { rule: "text", path: pathOf(stack, key), inName: false }
    } else if (typeof child === "number") {
      if (refusesNumber(child)) return { rule: "number", path: pathOf(stack, key), value: child }
    } else if (typeof child === "object" && child !== null) {
      // the child is at level above + stack.length + 1
      if (above + stack.length + 1 > max) return { rule: "depth", path: pathOf(stack, key) }
    }
    return undefined
  })
}

/**
 * How many levels of objects and arrays `value` has (a scalar: 0), counting no further than `limit + 1`: enough to
 * tell a value within `limit` from one past it, in constant stack and without walking the rest of a deep value.
 *
 * @category validation
 */
export const jsonDepth = (value: unknown, limit: number = maxJsonDepth): number => {
  if (typeof value !== "object" || value === null) return 0
  let deepest = 1
  const past = walk(value, (stack, _key, child) => {
    if (typeof child === "object" && child !== null && stack.length + 1 > deepest) {
      deepest = stack.length + 1
      if (deepest > limit) return deepest
    }
    return undefined
  })
  return past ?? deepest
}

/**
 * A path as a JSON client spells it (`tasks[0].metadata.a`); the body itself when empty. A path longer than
 * `shown` segments keeps its first ones (which name the field) and ends in `…`.
 *
 * @category encoding
 */
export const formatJsonPath = (path: JsonPath, shown: number = Number.POSITIVE_INFINITY): string => {
  if (path.length === 0) return "request body"
  let out = ""
  const count = Math.min(path.length, shown)
  for (let i = 0; i < count; i++) {
    const segment = path[i]!
    out += typeof segment === "number" ? `[${segment}]` : i === 0 ? segment : `.${segment}`
  }
  return count < path.length ? `${out}…` : out
}

/** Segments of a too-deep path a message shows: enough to name the field, not 64 levels of it. */
const shownSegments = 4

/**
 * The 400 message for a {@link JsonProblem} of kind `depth` or `number` found at `path` in a request body.
 *
 * @category encoding
 */
export const structureMessage = (problem: Exclude<JsonProblem, { readonly rule: "text" }>): string =>
  problem.rule === "depth"
    ? `${formatJsonPath(problem.path, shownSegments)} is nested too deep: objects and arrays may nest at most ` +
      `${maxJsonDepth} levels in a request body`
    : `${
      formatJsonPath(problem.path)
    } is a number beyond ±${maxJsonMagnitude} (2^53 - 1), the largest a JSON number holds exactly; ` +
      "send it as a string"

/**
 * The member name of the value that stands on the read path for a stored free-form value nested deeper than
 * {@link maxJsonDepth} levels (stored before the limit existed): a caller can tell it from its own data.
 *
 * @category models
 */
export const unreadableMarker = "svc_error"

/**
 * What the read path shows instead of a stored free-form value nested deeper than {@link maxJsonDepth} levels:
 * `{"svc_error": "..."}` saying why and what to do, so that one such value never fails a whole page.
 *
 * @category constructors
 */
export const unreadableValue = (member: string, remedy: string): { readonly svc_error: string } => ({
  [unreadableMarker]: `${member} is not shown: it was stored nested more than ${maxJsonDepth} levels deep, ` +
    `before svc refused such values; ${remedy}`
})
