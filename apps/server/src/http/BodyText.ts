/**
 * One rule for the text of every JSON request body (issue 16, item 7: invalid UTF-8 in `search_query` was
 * accepted, decoded to U+FFFD; a NUL was silently stripped from `search_query` but rejected in other fields).
 * A body must be valid UTF-8, and no string in it (value or key, at any depth) may hold a NUL (U+0000, which
 * PostgreSQL cannot store) or an unpaired UTF-16 surrogate (`"\ud800"`, which has no UTF-8 form). A violation
 * is a 400 naming the field; nothing is stripped or replaced.
 *
 * Cost: `isUtf8` is one native pass over the bytes the body is already buffered in (no copy); the JSON is
 * walked only when its text contains a `\u0000` or a surrogate escape, which well-behaved clients rarely send.
 *
 * Decision record: docs/decisions/0011-request-target-rules.md
 */
import { isUtf8 } from "node:buffer"

const BACKSLASH = 0x5c

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

const bad = (text: string) => text.includes("\u0000") || !text.isWellFormed()

const pathOf = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "request body"
    : path.map((p, i) => typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`).join("")

/** The path of the first string (key or value) that breaks the rule, if any. */
const findBad = (value: unknown, path: Array<string | number>): string | undefined => {
  if (typeof value === "string") return bad(value) ? pathOf(path) : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findBad(value[i], [...path, i])
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (bad(key)) return `a field name in ${pathOf(path)}`
      const found = findBad(child, [...path, key])
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** @category validation */
export const NOT_UTF8 = "request body is not valid UTF-8"

const message = (found: string) =>
  `${found} must not contain a NUL character (\\u0000) or an unpaired surrogate (\\ud800-\\udfff)`

/**
 * The 400 message for a value already parsed from a body read in parts (create-batch-call's stream, one task at a
 * time), found at `path` in the body; undefined when it is fine.
 *
 * @category validation
 */
export const checkValue = (value: unknown, path: ReadonlyArray<string | number>): string | undefined => {
  const found = findBad(value, [...path])
  return found === undefined ? undefined : message(found)
}

/**
 * The 400 message for a JSON body that breaks the rule, or undefined when it is fine (or not JSON at all: the
 * decoder says so then).
 *
 * @category validation
 */
export const check = (bytes: Uint8Array): string | undefined => {
  if (!isUtf8(bytes)) return NOT_UTF8
  if (!hasSuspectEscape(bytes)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"))
  } catch {
    return undefined
  }
  const found = findBad(parsed, [])
  return found === undefined ? undefined : message(found)
}
