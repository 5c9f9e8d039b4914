/**
 * Progress of a long admin command on stderr (stdout carries only the JSON result).
 *
 * On a terminal it is one line redrawn in place (`\r`), at most every 100 ms. Anywhere else (a CI log, a file, a
 * pipe) carriage returns would pile up into one unreadable line, so it prints a plain line per phase at 0%, every
 * 10% and 100% instead: at most a dozen lines per phase however large the input (docs/decisions/0531).
 */

/** A phase and how far it is. */
export interface Progress {
  readonly phase: string
  readonly done: number
  readonly total: number
}

/** Writes progress lines for `label` to `stream` (default stderr); call with each update. */
export const reporter = (
  label: string,
  options: {
    readonly stream?: { readonly isTTY?: boolean; write(text: string): unknown }
    readonly now?: () => number
  } = {}
): (progress: Progress) => void => {
  const stream = options.stream ?? process.stderr
  const now = options.now ?? (() => performance.now())
  const tty = stream.isTTY === true
  let phase: string | undefined
  let lastStep = -1
  let lastDraw = Number.NEGATIVE_INFINITY
  let open = false
  return (progress) => {
    const total = Math.max(progress.total, progress.done)
    const percent = total === 0 ? 100 : Math.floor((progress.done / total) * 100)
    const finished = progress.done >= total
    const text = `${label} ${progress.phase} ${progress.done}/${total} ${percent}%`
    if (tty) {
      const t = now()
      if (progress.phase === phase && !finished && t - lastDraw < 100) return
      if (progress.phase !== phase && open) stream.write("\n")
      phase = progress.phase
      lastDraw = t
      const filled = Math.floor(percent / 4)
      stream.write(
        `\r${label} ${progress.phase.padEnd(7)} [${"#".repeat(filled)}${".".repeat(25 - filled)}] ` +
          `${progress.done}/${total} ${percent}%`
      )
      open = !finished
      if (finished) stream.write("\n")
      return
    }
    const step = finished ? 10 : Math.floor(percent / 10)
    if (progress.phase === phase && step <= lastStep) return
    phase = progress.phase
    lastStep = step
    stream.write(`${text}\n`)
  }
}
