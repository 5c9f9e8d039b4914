/** Offsets to 1-based line and column (UTF-16 code units, as SARIF's default `columnKind`). */

/** The offset of the first character of each line. */
export const lineStarts = (text: string): Array<number> => {
  const starts = [0]
  let i = text.indexOf("\n")
  while (i !== -1) {
    starts.push(i + 1)
    i = text.indexOf("\n", i + 1)
  }
  return starts
}

/** The 1-based line and column of an offset. */
export const position = (starts: ReadonlyArray<number>, offset: number): { line: number; column: number } => {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (starts[mid]! <= offset) lo = mid
    else hi = mid - 1
  }
  return { line: lo + 1, column: offset - starts[lo]! + 1 }
}
