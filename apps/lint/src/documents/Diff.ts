/**
 * A unified diff of two texts (for `--fix-dry-run`), by longest common subsequence of lines with
 * three lines of context. Fix edits are small, so the quadratic table stays small; past a size
 * limit the whole file is shown as replaced rather than spending seconds on a table.
 */

const CONTEXT = 3
const MAX_CELLS = 4_000_000

type Edit = { readonly kind: " " | "-" | "+"; readonly line: string }

const editScript = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<Edit> => {
  // Common head and tail never need the table.
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const am = a.slice(head, a.length - tail)
  const bm = b.slice(head, b.length - tail)
  const edits: Array<Edit> = a.slice(0, head).map((line) => ({ kind: " ", line }))
  if (am.length * bm.length > MAX_CELLS) {
    for (const line of am) edits.push({ kind: "-", line })
    for (const line of bm) edits.push({ kind: "+", line })
  } else {
    const n = am.length
    const m = bm.length
    const table = new Uint32Array((n + 1) * (m + 1))
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i * (m + 1) + j] = am[i] === bm[j]
          ? table[(i + 1) * (m + 1) + j + 1]! + 1
          : Math.max(table[(i + 1) * (m + 1) + j]!, table[i * (m + 1) + j + 1]!)
      }
    }
    let i = 0
    let j = 0
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        edits.push({ kind: " ", line: am[i++]! })
        j++
      } else if (i < n && (j === m || table[(i + 1) * (m + 1) + j]! >= table[i * (m + 1) + j + 1]!)) {
        // Deletions before insertions, as diff(1) prints them.
        edits.push({ kind: "-", line: am[i++]! })
      } else {
        edits.push({ kind: "+", line: bm[j++]! })
      }
    }
  }
  for (const line of a.slice(a.length - tail)) edits.push({ kind: " ", line })
  return edits
}

const splitLines = (text: string) => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** The unified diff of `before` and `after` for `file`, empty when they are equal. */
export const unifiedDiff = (file: string, before: string, after: string): string => {
  if (before === after) return ""
  const edits = editScript(splitLines(before), splitLines(after))
  const out = [`--- a/${file}`, `+++ b/${file}`]
  let k = 0
  while (k < edits.length) {
    while (k < edits.length && edits[k]!.kind === " ") k++
    if (k >= edits.length) break
    const start = Math.max(0, k - CONTEXT)
    let end = k
    // Extend the hunk while changes are within 2 * CONTEXT lines of each other.
    for (;;) {
      while (end < edits.length && edits[end]!.kind !== " ") end++
      let gap = end
      while (gap < edits.length && edits[gap]!.kind === " ") gap++
      if (gap < edits.length && gap - end <= 2 * CONTEXT) end = gap
      else {
        end = Math.min(edits.length, end + CONTEXT)
        break
      }
    }
    let aLine = 1
    let bLine = 1
    for (let x = 0; x < start; x++) {
      if (edits[x]!.kind !== "+") aLine++
      if (edits[x]!.kind !== "-") bLine++
    }
    const hunk = edits.slice(start, end)
    const aCount = hunk.filter((e) => e.kind !== "+").length
    const bCount = hunk.filter((e) => e.kind !== "-").length
    out.push(`@@ -${aCount === 0 ? aLine - 1 : aLine},${aCount} +${bCount === 0 ? bLine - 1 : bLine},${bCount} @@`)
    for (const e of hunk) out.push(`${e.kind}${e.line}`)
    k = end
  }
  return `${out.join("\n")}\n`
}
