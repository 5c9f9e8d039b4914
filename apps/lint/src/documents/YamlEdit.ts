/**
 * Applies fix operations to YAML text through the `yaml` package's Document API: the document is
 * parsed with source ranges, the operation's target node is found in it, and only that node's
 * text is replaced, inserted or deleted; new values are rendered by the same package. Comments,
 * quoting, blank lines and the indentation of everything else keep their bytes (re-printing the
 * whole document would normalize all of them).
 *
 * Block collections get block values in the file's indentation; flow collections get JSON-style
 * flow values. An operation the editor cannot place returns the text unchanged, and the caller's
 * check (the edited text must parse to what the domain's `applyFixes` computes) catches it.
 */
import type { FixOperation } from "@svc/domain/Deprecation/Fixes.ts"
import {
  isMap,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  parseDocument,
  stringify,
  type YAMLMap,
  type YAMLSeq
} from "yaml"

type Range = readonly [number, number, number]

const splice = (text: string, start: number, end: number, insert: string) =>
  text.slice(0, start) + insert + text.slice(end)

const columnOf = (text: string, offset: number) => offset - (text.lastIndexOf("\n", offset - 1) + 1)

const lineStart = (text: string, offset: number) => text.lastIndexOf("\n", offset - 1) + 1

const lineEnd = (text: string, offset: number) => {
  const i = text.indexOf("\n", offset)
  return i === -1 ? text.length : i
}

/** The file's indentation unit (spaces of the first indented line; default 2). */
const indentUnit = (text: string): number => {
  const match = /\n( +)\S/.exec(text)
  return match === null ? 2 : match[1]!.length
}

/** Whether block sequences under a key are indented in this file (`key:\n  - a` vs `key:\n- a`). */
const indentsSequences = (text: string): boolean => {
  const match = /:[ \t]*\n([ \t]*)- /.exec(text)
  if (match === null) return true
  const keyLine = text.slice(lineStart(text, match.index), match.index)
  return match[1]!.length > /^[ \t]*/.exec(keyLine)![0].length
}

const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/

const renderKey = (key: string) => (KEY.test(key) ? key : JSON.stringify(key))

const isCollection = (value: unknown) => typeof value === "object" && value !== null

/** A scalar as YAML (quoted when the plain form would read as something else). */
const renderScalar = (value: unknown): string => stringify(value, { lineWidth: 0 }).trimEnd()

/** A block collection as lines at `indent` columns (no leading newline). */
const renderBlock = (value: unknown, indent: number, unit: number, indentSeq: boolean): string =>
  stringify(value, { indent: unit, indentSeq, lineWidth: 0 })
    .trimEnd()
    .split("\n")
    .map((line) => " ".repeat(indent) + line)
    .join("\n")

interface Context {
  readonly text: string
  readonly unit: number
  readonly indentSeq: boolean
  readonly newline: string
}

/** The value text after `key:` in a block mapping whose keys sit at `keyColumn`. */
const valueAfterKey = (ctx: Context, value: unknown, keyColumn: number): string => {
  if (!isCollection(value) || (Array.isArray(value) && value.length === 0) || Object.keys(value).length === 0) {
    return ` ${isCollection(value) ? JSON.stringify(value) : renderScalar(value)}`
  }
  const indent = Array.isArray(value) && !ctx.indentSeq ? keyColumn : keyColumn + ctx.unit
  return ctx.newline + renderBlock(value, indent, ctx.unit, ctx.indentSeq).replace(/\n/g, ctx.newline)
}

/** A sequence item's text after `- ` for items at `dashColumn`. */
const itemText = (ctx: Context, value: unknown, dashColumn: number): string => {
  if (!isCollection(value)) return renderScalar(value)
  const block = renderBlock(value, dashColumn + 2, ctx.unit, ctx.indentSeq)
  return block.slice(dashColumn + 2).replace(/\n/g, ctx.newline)
}

const findPair = (map: YAMLMap, key: string): Pair<unknown, unknown> | undefined => {
  let found: Pair<unknown, unknown> | undefined
  for (const pair of map.items) {
    const k = pair.key
    if (isScalar(k) ? String(k.value) === key : String(k) === key) found = pair
  }
  return found
}

const nodeAt = (root: unknown, path: ReadonlyArray<string | number>): unknown => {
  let node: unknown = root
  for (const step of path) {
    if (isMap(node)) node = findPair(node, String(step))?.value
    else if (isSeq(node) && typeof step === "number") node = node.items[step]
    else return undefined
  }
  return node
}

const rangeOf = (node: unknown): Range | undefined => (node as Node | undefined)?.range ?? undefined

const setInMap = (ctx: Context, map: YAMLMap, key: string, value: unknown): string | undefined => {
  const { text } = ctx
  const pair = findPair(map, key)
  if (pair !== undefined) {
    const keyRange = rangeOf(pair.key)
    const old = pair.value
    const valueRange = rangeOf(old)
    if (keyRange === undefined) return undefined
    if (map.flow) {
      if (valueRange === undefined) return undefined
      return splice(
        text,
        valueRange[0],
        valueRange[1],
        isCollection(value) ? JSON.stringify(value) : renderScalar(value)
      )
    }
    // Appending to an existing block list keeps its items as they are written.
    if (
      Array.isArray(value) && isSeq(old) && !old.flow && old.items.length > 0 &&
      old.items.length < value.length && sameJson(old.toJSON(), value.slice(0, old.items.length))
    ) {
      const seqRange = rangeOf(old)!
      const dash = columnOf(text, seqRange[0])
      let out = ""
      for (const item of value.slice(old.items.length)) {
        out += `${ctx.newline}${" ".repeat(dash)}- ${itemText(ctx, item, dash)}`
      }
      const at = lineEnd(text, seqRange[1] - 1)
      return splice(text, at, at, out)
    }
    if (!isCollection(value) && isScalar(old) && valueRange !== undefined) {
      return splice(text, valueRange[0], valueRange[1], renderScalar(value))
    }
    const end = valueRange === undefined ? keyRange[1] : valueRange[1]
    const colon = text.indexOf(":", keyRange[1])
    if (colon === -1 || colon > end) return undefined
    return splice(text, colon + 1, end, valueAfterKey(ctx, value, columnOf(text, keyRange[0])))
  }
  const range = rangeOf(map)
  if (range === undefined) return undefined
  if (map.flow) {
    const close = text.lastIndexOf("}", range[1])
    if (close === -1) return undefined
    const entry = `${renderKey(key)}: ${isCollection(value) ? JSON.stringify(value) : renderScalar(value)}`
    return splice(text, close, close, map.items.length === 0 ? entry : `, ${entry}`)
  }
  const first = rangeOf(map.items[0]?.key)
  const lastPair = map.items[map.items.length - 1]
  if (first === undefined || lastPair === undefined) return undefined
  const column = columnOf(text, first[0])
  const lastEnd = rangeOf(lastPair.value)?.[1] ?? rangeOf(lastPair.key)![1]
  const at = lineEnd(text, Math.max(lastEnd - 1, 0))
  return splice(
    text,
    at,
    at,
    `${ctx.newline}${" ".repeat(column)}${renderKey(key)}:${valueAfterKey(ctx, value, column)}`
  )
}

const removeFromMap = (ctx: Context, map: YAMLMap, key: string): string | undefined => {
  const { text } = ctx
  const pair = findPair(map, key)
  if (pair === undefined) return text
  const keyRange = rangeOf(pair.key)
  if (keyRange === undefined) return undefined
  const end = rangeOf(pair.value)?.[1] ?? keyRange[1]
  const index = map.items.indexOf(pair)
  const next = map.items[index + 1]
  if (map.flow) {
    if (next !== undefined) return splice(text, keyRange[0], rangeOf(next.key)![0], "")
    const prev = map.items[index - 1]
    if (prev === undefined) return splice(text, keyRange[0], end, "")
    return splice(text, rangeOf(prev.value)?.[1] ?? rangeOf(prev.key)![1], end, "")
  }
  const start = lineStart(text, keyRange[0])
  const before = text.slice(start, keyRange[0])
  if (/^[ \t]*$/.test(before)) {
    // The pair owns its lines: delete them, with the trailing comment and newline.
    const stop = lineEnd(text, Math.max(end - 1, keyRange[0]))
    return splice(text, start, Math.min(stop + 1, text.length), "")
  }
  // The pair opens a sequence item (`- key: value`): the next pair moves up to its place.
  if (next !== undefined) return splice(text, keyRange[0], rangeOf(next.key)![0], "")
  return splice(text, keyRange[0], end, "{}")
}

/** Applies one operation to the text; `undefined` when the editor cannot place it. */
export const applyOperation = (text: string, op: FixOperation): string | undefined => {
  if (op.path.length === 0) return undefined
  const doc = parseDocument(text)
  if (doc.errors.length > 0) return undefined
  const ctx: Context = {
    text,
    unit: indentUnit(text),
    indentSeq: indentsSequences(text),
    newline: text.includes("\r\n") ? "\r\n" : "\n"
  }
  const parent = nodeAt(doc.contents, op.path.slice(0, -1))
  const last = op.path[op.path.length - 1]!
  if (isMap(parent)) {
    if (op.op === "set") return setInMap(ctx, parent, String(last), op.value)
    if (op.op === "remove") return removeFromMap(ctx, parent, String(last))
    const pair = findPair(parent, String(last))
    if (pair === undefined || findPair(parent, op.to) !== undefined) return text
    const range = rangeOf(pair.key)
    return range === undefined ? undefined : splice(text, range[0], range[1], renderKey(op.to))
  }
  if (isSeq(parent) && typeof last === "number") return applyToSeq(ctx, parent, last, op)
  return undefined
}

const applyToSeq = (ctx: Context, seq: YAMLSeq, index: number, op: FixOperation): string | undefined => {
  const { text } = ctx
  const item = seq.items[index]
  const range = rangeOf(item)
  if (op.op === "rename") return text
  if (op.op === "remove") {
    if (range === undefined) return item === undefined ? text : undefined
    if (seq.flow) return undefined
    const start = lineStart(text, range[0])
    return splice(text, start, Math.min(lineEnd(text, range[1] - 1) + 1, text.length), "")
  }
  if (range !== undefined) {
    if (seq.flow || !isCollection(op.value)) {
      return splice(
        text,
        range[0],
        range[1],
        isCollection(op.value) ? JSON.stringify(op.value) : renderScalar(op.value)
      )
    }
    return splice(text, range[0], range[1], itemText(ctx, op.value, columnOf(text, range[0]) - 2))
  }
  return undefined
}

/** Applies operations in order; `undefined` when one cannot be placed. */
export const applyOperations = (text: string, ops: ReadonlyArray<FixOperation>): string | undefined => {
  let current: string | undefined = text
  for (const op of ops) {
    if (current === undefined) return undefined
    current = applyOperation(current, op)
  }
  return current
}

/** Structural equality of JSON-like values (key order ignored). */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as Array<unknown>
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]))
  }
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length &&
    ka.every((k) =>
      Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
    )
}
