/**
 * The rules of every JSON request body, checked before any endpoint decodes it (create-batch-call applies them to its
 * stream: handlers/BatchCallBody.ts). A violation is a 400 naming the field; nothing is stripped, replaced or rounded.
 *
 * - Text (decision 0011): the body is valid UTF-8, and no string in it (value or key, at any
 *   depth) holds a NUL (U+0000, which PostgreSQL cannot store) or an unpaired UTF-16 surrogate (`"\ud800"`, which has
 *   no UTF-8 form).
 * - Structure (decision 0106, domain JsonLimits): objects and arrays nest at most 64 levels, and every
 *   number lies within ±(2^53 - 1). A body nested 4,500 levels deep crashed recursive walkers (a 500), and one
 *   stored through update-call broke list-calls for its org; a larger integer was stored rounded.
 * - One leading byte-order mark is skipped, as the decoder skips it (RFC 8259 §8.1 lets a parser ignore it); the rules
 *   apply to the text after it.
 *
 * Cost: `isUtf8` is one native pass over the bytes the body is already buffered in (no copy); one more pass finds
 * whether the body may break a structure rule (nesting past the limit, a number of 16 or more integer digits or with
 * an exponent) and whether it holds an escape that may be a NUL or a surrogate. Only such a body, which well-behaved
 * clients rarely send, is parsed and walked (iteratively) to name the field.
 */
import {
  firstJsonProblem,
  formatJsonPath,
  type JsonPath,
  type JsonProblem,
  maxJsonDepth,
  structureMessage
} from "@svc/domain/models/JsonLimits.ts"
import { isUtf8 } from "node:buffer"

const BACKSLASH = 0x5c
const QUOTE = 0x22
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const DIGIT_0 = 0x30
const DIGIT_9 = 0x39
const LETTER_E = 0x65
const LETTER_CAPITAL_E = 0x45

/** Integer digits from which a number may pass 2^53 - 1 (9,007,199,254,740,991 has 16). */
const SUSPECT_DIGITS = 16

/** Where the JSON text starts: after one UTF-8 byte-order mark, if any. */
export const textStart = (bytes: Uint8Array): number =>
  bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0

/** Whether `bytes` hold an escape `\u0000` or `\uD8..`-`\uDF..` that is not itself an escaped backslash. */
const hasSuspectEscape = (bytes: Uint8Array): boolean => {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let at = text.indexOf("\\u"); at !== -1; at = text.indexOf("\\u", at + 2)) {
    let backslashes = 0
    for (let i = at - 1; i >= 0 && text[i] === BACKSLASH; i--) backslashes++
    if (backslashes % 2 === 1) continue // `\\u…`: a literal backslash, then the letter u
    const hex = text.toString("latin1", at + 2, at + 6).toLowerCase()
    if (hex === "0000" || /^d[89a-f]/.test(hex)) return true
  }
  return false
}

/**
 * Whether the JSON text in `bytes` from `start` may break a structure rule: objects and arrays nested past the limit,
 * or a number with 16 or more integer digits or an exponent. Never a false "no"; a "yes" only costs a parse. Invalid
 * JSON is not judged here (the decoder says so).
 */
const mayBreakStructure = (bytes: Uint8Array, start: number): boolean => {
  let depth = 0
  let inString = false
  // the run of digits being read
  let digits = 0
  for (let i = start; i < bytes.length; i++) {
    const b = bytes[i]!
    if (inString) {
      if (b === BACKSLASH) i++
      else if (b === QUOTE) inString = false
      continue
    }
    if (b >= DIGIT_0 && b <= DIGIT_9) {
      if (++digits >= SUSPECT_DIGITS) return true
      continue
    }
    if (digits > 0) {
      // the end of a run of digits: an exponent makes its number suspect; a fraction's digits count anew
      if (b === LETTER_E || b === LETTER_CAPITAL_E) return true
      digits = 0
    }
    if (b === QUOTE) inString = true
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > maxJsonDepth) return true
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--
  }
  return false
}

/** @category validation */
export const NOT_UTF8 = "request body is not valid UTF-8"

const textMessage = (found: string) =>
  `${found} must not contain a NUL character (\\u0000) or an unpaired surrogate (\\ud800-\\udfff)`

/** The 400 message of a problem found at `path` (relative to the body) + the problem's own path. */
const messageOf = (problem: JsonProblem, prefix: JsonPath): string => {
  const path = prefix.length === 0 ? problem.path : [...prefix, ...problem.path]
  if (problem.rule !== "text") return structureMessage({ ...problem, path })
  return textMessage(problem.inName ? `a field name in ${formatJsonPath(path.slice(0, -1))}` : formatJsonPath(path))
}

/**
 * The 400 message for a value already parsed from a body read in parts (create-batch-call's stream, one task at a
 * time), found at `path` in the body with `levelsAbove` objects and arrays around it; undefined when it is fine.
 * Strings are checked only with `text` (the caller saw an escape that may be a NUL or a surrogate).
 *
 * @category validation
 */
export const checkValue = (
  value: unknown,
  path: JsonPath,
  options: { readonly text: boolean; readonly levelsAbove: number }
): string | undefined => {
  const problem = firstJsonProblem(value, options)
  return problem === undefined ? undefined : messageOf(problem, path)
}

/**
 * The 400 message for a JSON body that breaks a rule, or undefined when it is fine (or not JSON at all: the decoder
 * says so then).
 *
 * @category validation
 */
export const check = (bytes: Uint8Array): string | undefined => {
  if (!isUtf8(bytes)) return NOT_UTF8
  const start = textStart(bytes)
  const text = hasSuspectEscape(bytes)
  if (!text && !mayBreakStructure(bytes, start)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.byteLength - start).toString("utf8"))
  } catch {
    return undefined
  }
  return checkValue(parsed, [], { text, levelsAbove: 0 })
}
