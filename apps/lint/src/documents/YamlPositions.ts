/**
 * Source ranges of JSON paths in a YAML text, from js-yaml's event stream (the parser that also
 * checked the file, so the two always agree on the document's shape). Runs only for files with
 * findings; only the branches of the tree that lead to a requested path are tracked.
 */
import { EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, type ScalarEvent } from "js-yaml"

interface Trie {
  readonly children: Map<string, Trie>
}

interface Ranges {
  key?: { start: number; end: number }
  value?: { start: number; end: number }
}

interface Frame {
  readonly isMap: boolean
  /** The trie node of this collection's own path (undefined: off every requested path). */
  readonly trie: Trie | undefined
  readonly ranges: Map<Trie, Ranges>
  expectingKey: boolean
  child: Trie | undefined
  index: number
}

const keyOf = (path: ReadonlyArray<string | number>) => path.map(String).join("\u0000")

/**
 * For each path (of document `docIndex`), the range a finding points at: the key when the path
 * ends in a mapping key that exists, else the value, else the nearest existing ancestor.
 */
export const locate = (
  text: string,
  docIndex: number,
  paths: ReadonlyArray<ReadonlyArray<string | number>>,
  /** `text`'s event stream when the caller already has it (the linter parses each file once). */
  events: ReturnType<typeof parseEvents> = parseEvents(text, {})
): Map<string, { start: number; end: number }> => {
  const root: Trie = { children: new Map() }
  for (const path of paths) {
    let node = root
    for (const step of path) {
      const key = String(step)
      let next = node.children.get(key)
      if (next === undefined) {
        next = { children: new Map() }
        node.children.set(key, next)
      }
      node = next
    }
  }
  const ranges = new Map<Trie, Ranges>()
  const rangesOf = (trie: Trie) => {
    let r = ranges.get(trie)
    if (r === undefined) {
      r = {}
      ranges.set(trie, r)
    }
    return r
  }

  let doc = -1
  const stack: Array<Frame> = []
  for (const event of events) {
    if (event.type === EVENT_ID.DOCUMENT) {
      doc++
      continue
    }
    if (event.type === EVENT_ID.POP) {
      stack.pop()
      continue
    }
    if (doc !== docIndex) {
      if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) stack.push(offPath)
      continue
    }
    const parent = stack[stack.length - 1]
    let trie: Trie | undefined
    let start: number
    let end: number
    if (event.type === EVENT_ID.SCALAR) {
      // Quoted scalars' offsets exclude the quotes; a finding points at the whole token.
      const quoted = event.style === SCALAR_STYLE.SINGLE_QUOTED || event.style === SCALAR_STYLE.DOUBLE_QUOTED
      start = quoted ? event.valueStart - 1 : event.valueStart
      end = quoted ? event.valueEnd + 1 : event.valueEnd
    } else if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) {
      start = event.start
      end = event.start + 1
    } else {
      start = event.anchorStart >= 1 ? event.anchorStart - 1 : 0
      end = event.anchorEnd
    }
    if (parent === undefined) {
      trie = root
    } else if (parent.isMap && parent.expectingKey) {
      parent.expectingKey = false
      parent.child = undefined
      if (parent.trie !== undefined && event.type === EVENT_ID.SCALAR) {
        const child = parent.trie.children.get(getScalarValue(text, event as ScalarEvent))
        if (child !== undefined) {
          rangesOf(child).key = { start, end }
          parent.child = child
        }
      }
      if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) stack.push(offPath)
      continue
    } else if (parent.isMap) {
      parent.expectingKey = true
      trie = parent.child
    } else {
      trie = parent.trie?.children.get(String(parent.index))
      parent.index++
    }
    if (trie !== undefined) rangesOf(trie).value = { start, end }
    if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) {
      stack.push({
        isMap: event.type === EVENT_ID.MAPPING,
        trie: trie !== undefined && trie.children.size > 0 ? trie : undefined,
        ranges,
        expectingKey: true,
        child: undefined,
        index: 0
      })
    }
  }

  const result = new Map<string, { start: number; end: number }>()
  for (const path of paths) {
    let node = root
    let best = rangesOf(root).value ?? { start: 0, end: 0 }
    for (let k = 0; k < path.length; k++) {
      const next = node.children.get(String(path[k]))
      if (next === undefined) break
      const r = ranges.get(next)
      if (r === undefined) break
      const last = k === path.length - 1
      const found = last ? r.key ?? r.value : r.value ?? r.key
      if (found === undefined) break
      best = found
      node = next
    }
    result.set(keyOf(path), best)
  }
  return result
}

/** The key `locate` uses for a path. */
export const pathKey = keyOf

// A frame for collections outside the requested document or used as mapping keys: never tracked.
const offPath: Frame = {
  isMap: false,
  trie: undefined,
  ranges: new Map(),
  expectingKey: false,
  child: undefined,
  index: 0
}
