/**
 * A JSON parser that keeps source offsets, for the files that have findings (positions) or fixes
 * (text edits). The fast path never uses it: `JSON.parse` checks every file, and this parser runs
 * only where a finding needs a line and column, or to say where `JSON.parse` failed.
 *
 * Offsets are UTF-16 indexes into the text, `end` exclusive. Duplicate keys keep the last value, as
 * `JSON.parse` does.
 */

/** A parsed value with its source range. */
export type JsonNode =
  | { readonly type: "object"; readonly start: number; readonly end: number; readonly members: Array<JsonMember> }
  | { readonly type: "array"; readonly start: number; readonly end: number; readonly items: Array<JsonNode> }
  | { readonly type: "scalar"; readonly start: number; readonly end: number; readonly value: unknown }

/** One `"key": value` of an object. */
export interface JsonMember {
  readonly key: string
  readonly keyStart: number
  readonly keyEnd: number
  readonly value: JsonNode
}

/** Where and why a text is not JSON. */
export class JsonSyntaxError extends Error {
  readonly offset: number
  constructor(message: string, offset: number) {
    super(message)
    this.offset = offset
  }
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
const isWs = (c: number) => c === 32 || c === 10 || c === 13 || c === 9

/** A number, `true`, `false` or `null` at `lastIndex` (sticky: no slice of the text per literal). */
const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y

/** Parses JSON text into a tree with ranges; throws `JsonSyntaxError`. */
export const parse = (text: string): JsonNode => {
  let i = 0
  const n = text.length
  // A UTF-8 byte-order mark is not JSON but editors write it; JSON.parse of the decoded text sees it.
  if (text.charCodeAt(0) === 0xfeff) i = 1

  const skipWs = () => {
    while (i < n && isWs(text.charCodeAt(i))) i++
  }
  const fail = (message: string): never => {
    throw new JsonSyntaxError(message, Math.min(i, n))
  }
  const describe = () => (i >= n ? "end of input" : `"${text[i]}"`)

  const parseString = (): string => {
    const start = i
    i++
    let simple = true
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 34) break
      if (c === 92) {
        simple = false
        i += 2
        continue
      }
      if (c < 0x20) fail("control character in string")
      i++
    }
    if (i >= n) {
      i = start
      fail("unterminated string")
    }
    i++
    const raw = text.slice(start, i)
    if (simple) return raw.slice(1, -1)
    try {
      return JSON.parse(raw) as string
    } catch {
      i = start
      return fail("invalid escape in string")
    }
  }

  const parseValue = (depth: number): JsonNode => {
    if (depth > 10_000) fail("nesting too deep")
    skipWs()
    const start = i
    const c = text[i]
    if (c === "{") {
      i++
      const members: Array<JsonMember> = []
      skipWs()
      if (text[i] === "}") {
        i++
        return { type: "object", start, end: i, members }
      }
      for (;;) {
        skipWs()
        if (text[i] !== "\"") fail(`expected a property name in double quotes, found ${describe()}`)
        const keyStart = i
        const key = parseString()
        const keyEnd = i
        skipWs()
        if (text[i] !== ":") fail(`expected ":" after property name, found ${describe()}`)
        i++
        const value = parseValue(depth + 1)
        members.push({ key, keyStart, keyEnd, value })
        skipWs()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return { type: "object", start, end: i, members }
        }
        fail(`expected "," or "}" after property value, found ${describe()}`)
      }
    }
    if (c === "[") {
      i++
      const items: Array<JsonNode> = []
      skipWs()
      if (text[i] === "]") {
        i++
        return { type: "array", start, end: i, items }
      }
      for (;;) {
        items.push(parseValue(depth + 1))
        skipWs()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return { type: "array", start, end: i, items }
        }
        fail(`expected "," or "]" after array element, found ${describe()}`)
      }
    }
    if (c === "\"") {
      const value = parseString()
      return { type: "scalar", start, end: i, value }
    }
    LITERAL.lastIndex = i
    const literal = LITERAL.exec(text)
    if (literal === null) fail(`unexpected ${describe()}`)
    const token = literal![0]
    i += token.length
    const value = token === "true" ? true : token === "false" ? false : token === "null" ? null : JSON.parse(token)
    return { type: "scalar", start, end: i, value }
  }

  const root = parseValue(0)
  skipWs()
  if (i < n) fail(`unexpected ${describe()} after the JSON value`)
  return root
}

/** The member of an object with `key` (the last one when a key repeats). */
export const member = (node: JsonNode, key: string): JsonMember | undefined => {
  if (node.type !== "object") return undefined
  for (let k = node.members.length - 1; k >= 0; k--) {
    if (node.members[k]!.key === key) return node.members[k]
  }
  return undefined
}

/** The node at a path, if any. */
export const nodeAt = (root: JsonNode, path: ReadonlyArray<string | number>): JsonNode | undefined => {
  let node: JsonNode | undefined = root
  for (const step of path) {
    if (node === undefined) return undefined
    if (node.type === "array" && typeof step === "number") node = node.items[step]
    else if (node.type === "object") node = member(node, String(step))?.value
    else return undefined
  }
  return node
}

/**
 * The source range a finding at `path` points at: the key when the last step is an object key
 * that exists, else the value (an array element, the root), else the nearest existing ancestor.
 */
export const rangeOf = (root: JsonNode, path: ReadonlyArray<string | number>): { start: number; end: number } => {
  let node: JsonNode = root
  let range = { start: root.start, end: root.start + 1 }
  for (let k = 0; k < path.length; k++) {
    const step = path[k]!
    if (node.type === "object") {
      const m = member(node, String(step))
      if (m === undefined) return range
      range = { start: m.keyStart, end: m.keyEnd }
      node = m.value
    } else if (node.type === "array" && typeof step === "number" && node.items[step] !== undefined) {
      node = node.items[step]
      range = { start: node.start, end: node.type === "scalar" ? node.end : node.start + 1 }
    } else {
      return range
    }
  }
  return range
}
