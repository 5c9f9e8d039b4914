/**
 * The text rule of every request, for path parameters, query values and every string of a JSON body, its
 * field names included (docs/decisions/0105-input-rules.md): text is valid Unicode without NUL.
 *
 * - No U+0000: PostgreSQL's `text` and `jsonb` cannot hold it, so it either failed a statement (a 500:
 *   `GET /get-contact/a%00b`) or was stripped from `search_query` without a word (decision 0011).
 * - No unpaired UTF-16 surrogate (`"\ud800"` in JSON): it has no UTF-8 form, so it is the JSON spelling of
 *   invalid UTF-8; PostgreSQL refuses it too.
 * - Bytes are valid UTF-8: a decoder would otherwise replace them with U+FFFD and store a different value than
 *   the one sent.
 *
 * Each is a 400 naming the field, never a strip or a replacement: "never drop input silently". The functions
 * here are pure; the HTTP edge applies them (apps/server/src/http/InputRules.ts).
 */
import { firstJsonProblem } from "./JsonLimits.ts"

/**
 * Why a string breaks the rule, as a clause that follows the field's name; `undefined` when it is acceptable.
 *
 * @category validation
 */
export const textProblem = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "must not contain the NUL character (\\u0000)"
    : text.isWellFormed()
    ? undefined
    : "must not contain an unpaired UTF-16 surrogate (\\ud800-\\udfff), which is not valid Unicode"

/**
 * The first string of a parsed JSON value that breaks the rule, in document order, field names before their
 * values; `undefined` when all are acceptable. `inName` tells that the field's name is the offending string.
 *
 * @category validation
 */
export const firstUnacceptableText = (json: unknown): {
  readonly path: ReadonlyArray<PropertyKey>
  readonly problem: string
  readonly value: string
  readonly inName: boolean
} | undefined => {
  // iterative (decision 0106): a value nested 50,000 levels deep must not exhaust the stack
  const found = firstJsonProblem(json, { text: true, numbers: false, maxDepth: Number.POSITIVE_INFINITY })
  if (found === undefined || found.rule !== "text") return undefined
  const { inName, path } = found
  let value: unknown = json
  for (let i = 0; i < path.length; i++) value = (value as Record<PropertyKey, unknown>)[path[i]!]
  const text = inName ? String(path[path.length - 1]) : value as string
  return { path, problem: textProblem(text)!, value: text, inName }
}

const BACKSLASH = 0x5c
const LETTER_U = 0x75

const hexValue = (byte: number | undefined): number =>
  byte === undefined
    ? -1
    : byte >= 0x30 && byte <= 0x39
    ? byte - 0x30
    : byte >= 0x41 && byte <= 0x46
    ? byte - 0x37
    : byte >= 0x61 && byte <= 0x66
    ? byte - 0x57
    : -1

/**
 * Whether a JSON body's bytes contain a `\u` escape of U+0000 or of a surrogate (U+D800-U+DFFF). In valid UTF-8
 * JSON such an escape is the only way a NUL or a surrogate can reach a parsed string (raw control characters
 * are not valid JSON; raw surrogates are not valid UTF-8), so a body without one needs no walk. Paired
 * surrogates (an emoji written `\ud83d\ude00`) and an escaped backslash before `u0000` are reported too: the
 * walk then finds nothing.
 *
 * @category validation
 */
export const mayHoldUnacceptableEscape = (bytes: Uint8Array): boolean => {
  let i = bytes.indexOf(BACKSLASH)
  while (i !== -1) {
    if (bytes[i + 1] === LETTER_U) {
      const d1 = hexValue(bytes[i + 2])
      const d2 = hexValue(bytes[i + 3])
      const d3 = hexValue(bytes[i + 4])
      const d4 = hexValue(bytes[i + 5])
      if (d1 === 0 && d2 === 0 && d3 === 0 && d4 === 0) return true
      if (d1 === 0xd && d2 >= 8) return true
    }
    i = bytes.indexOf(BACKSLASH, i + 2)
  }
  return false
}

/**
 * The index of the first byte that does not start a valid UTF-8 sequence (overlong forms, surrogates and code
 * points above U+10FFFF included), or -1 when all of `bytes` is UTF-8.
 *
 * @category validation
 */
export const firstInvalidUtf8 = (bytes: Uint8Array): number => {
  const n = bytes.length
  let i = 0
  while (i < n) {
    const b = bytes[i]!
    if (b < 0x80) {
      i++
      continue
    }
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0
    // a lead byte that is never valid (80-C1, F5-FF), or a sequence cut short by the end
    if (need === 0 || i + need >= n) return i
    const b1 = bytes[i + 1]!
    // the second byte's range is narrower after E0 (overlong), ED (surrogates), F0 (overlong), F4 (> U+10FFFF)
    const low = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80
    const high = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf
    if (b1 < low || b1 > high) return i
    for (let k = 2; k <= need; k++) {
      if ((bytes[i + k]! & 0xc0) !== 0x80) return i
    }
    i += need + 1
  }
  return -1
}

type Frame =
  | { readonly kind: "object"; key: string | undefined; expectingKey: boolean }
  | { readonly kind: "array"; index: number }

const framePath = (stack: ReadonlyArray<Frame>): Array<PropertyKey> =>
  stack.flatMap((frame): Array<PropertyKey> =>
    frame.kind === "array" ? [frame.index] : frame.key === undefined ? [] : [frame.key]
  )

const keyText = (token: string): string => {
  try {
    return JSON.parse(token) as string
  } catch {
    return token.slice(1, -1)
  }
}

/**
 * The path of the JSON string (a value or a field name) that holds the character at `offset` of `text`, e.g.
 * `["tasks", 0, "to_number"]`; `undefined` when `offset` is not inside a string. Reads `text` only up to
 * `offset`, so whatever follows may be malformed. Names the field of an invalid UTF-8 byte.
 *
 * @category validation
 */
export const jsonPathAt = (text: string, offset: number): ReadonlyArray<PropertyKey> | undefined => {
  const stack: Array<Frame> = []
  let i = 0
  while (i < text.length && i <= offset) {
    const c = text[i]
    if (c === "\"") {
      let j = i + 1
      while (j < text.length && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1
      const top = stack[stack.length - 1]
      const isKey = top !== undefined && top.kind === "object" && top.expectingKey
      if (offset <= j) return isKey ? [...framePath(stack), keyText(text.slice(i, j + 1))] : framePath(stack)
      if (isKey) {
        top.key = keyText(text.slice(i, j + 1))
        top.expectingKey = false
      }
      i = j + 1
      continue
    }
    if (c === "{") stack.push({ kind: "object", key: undefined, expectingKey: true })
    else if (c === "[") stack.push({ kind: "array", index: 0 })
    else if (c === "}" || c === "]") stack.pop()
    else if (c === ",") {
      const top = stack[stack.length - 1]
      if (top?.kind === "array") top.index++
      else if (top?.kind === "object") {
        top.expectingKey = true
        top.key = undefined
      }
    }
    i++
  }
  return undefined
}
