/**
 * Applies fix operations to JSON text as small text edits, so everything the fix does not touch
 * keeps its bytes: key order, indentation, line endings, compact arrays. New values are written
 * in the file's indentation unit (or on one line inside a one-line object).
 */
import type { FixOperation } from "@svc/domain/Deprecation/Fixes.ts"
import * as JsonTree from "./JsonTree.ts"

const lineIndent = (text: string, offset: number): string => {
  const start = text.lastIndexOf("\n", offset - 1) + 1
  return /^[ \t]*/.exec(text.slice(start, offset))![0]
}

/** The file's indentation unit: the first indented line's leading whitespace (default two spaces). */
const indentUnit = (text: string): string => /\n([ \t]+)\S/.exec(text)?.[1] ?? "  "

const isMultiline = (text: string, node: JsonTree.JsonNode) => text.slice(node.start, node.end).includes("\n")

const render = (value: unknown, indent: string, unit: string, newline: string, multiline: boolean): string =>
  multiline
    ? JSON.stringify(value, null, unit).replace(/\n/g, `${newline}${indent}`)
    : JSON.stringify(value)

const splice = (text: string, start: number, end: number, insert: string) =>
  text.slice(0, start) + insert + text.slice(end)

/** Applies one operation; returns the text unchanged when the operation does not apply. */
export const applyOperation = (text: string, op: FixOperation): string => {
  if (op.path.length === 0) return text
  const tree = JsonTree.parse(text)
  const parent = JsonTree.nodeAt(tree, op.path.slice(0, -1))
  const last = op.path[op.path.length - 1]!
  if (parent === undefined || parent.type === "scalar") return text
  const unit = indentUnit(text)
  const newline = text.includes("\r\n") ? "\r\n" : "\n"
  const multiline = isMultiline(text, parent)

  if (parent.type === "object") {
    const index = parent.members.findLastIndex((m) => m.key === String(last))
    const m = index === -1 ? undefined : parent.members[index]!
    if (op.op === "rename") {
      if (m === undefined || parent.members.some((x) => x.key === op.to)) return text
      return splice(text, m.keyStart, m.keyEnd, JSON.stringify(op.to))
    }
    if (op.op === "remove") {
      if (m === undefined) return text
      if (parent.members.length === 1) return splice(text, parent.start + 1, parent.end - 1, "")
      if (index < parent.members.length - 1) return splice(text, m.keyStart, parent.members[index + 1]!.keyStart, "")
      return splice(text, parent.members[index - 1]!.value.end, m.value.end, "")
    }
    if (m !== undefined) {
      const indent = lineIndent(text, m.keyStart)
      return splice(text, m.value.start, m.value.end, render(op.value, indent, unit, newline, multiline))
    }
    const key = JSON.stringify(String(last))
    if (parent.members.length === 0) {
      const outer = lineIndent(text, parent.start)
      const inner = outer + unit
      return splice(
        text,
        parent.start + 1,
        parent.end - 1,
        `${newline}${inner}${key}: ${render(op.value, inner, unit, newline, true)}${newline}${outer}`
      )
    }
    const prev = parent.members[parent.members.length - 1]!
    if (!multiline) return splice(text, prev.value.end, prev.value.end, `, ${key}: ${JSON.stringify(op.value)}`)
    const indent = lineIndent(text, prev.keyStart)
    return splice(
      text,
      prev.value.end,
      prev.value.end,
      `,${newline}${indent}${key}: ${render(op.value, indent, unit, newline, true)}`
    )
  }

  // An array: only numeric steps apply.
  if (typeof last !== "number") return text
  const item = parent.items[last]
  if (op.op === "rename") return text
  if (op.op === "remove") {
    if (item === undefined) return text
    if (parent.items.length === 1) return splice(text, parent.start + 1, parent.end - 1, "")
    if (last < parent.items.length - 1) return splice(text, item.start, parent.items[last + 1]!.start, "")
    return splice(text, parent.items[last - 1]!.end, item.end, "")
  }
  if (item !== undefined) {
    return splice(text, item.start, item.end, render(op.value, lineIndent(text, item.start), unit, newline, multiline))
  }
  if (last !== parent.items.length) return text
  if (parent.items.length === 0) return splice(text, parent.start + 1, parent.end - 1, JSON.stringify(op.value))
  const prev = parent.items[parent.items.length - 1]!
  if (!multiline) return splice(text, prev.end, prev.end, `, ${JSON.stringify(op.value)}`)
  const indent = lineIndent(text, prev.start)
  return splice(text, prev.end, prev.end, `,${newline}${indent}${render(op.value, indent, unit, newline, true)}`)
}

/** Applies operations in order. */
export const applyOperations = (text: string, ops: ReadonlyArray<FixOperation>): string =>
  ops.reduce(applyOperation, text)

/** The whole document re-serialized in the file's indentation (the fallback when edits disagree). */
export const reserialize = (text: string, value: unknown): string => {
  const newline = text.includes("\r\n") ? "\r\n" : "\n"
  const body = JSON.stringify(value, null, indentUnit(text)).replace(/\n/g, newline)
  return text.endsWith("\n") ? `${body}${newline}` : body
}
