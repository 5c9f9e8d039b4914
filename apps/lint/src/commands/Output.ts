/**
 * Where a run's standard output goes, and whether it is a terminal (the stylish report's colours).
 *
 * A reference with the process's stdout as its default, so a plain run needs nothing provided; the
 * resident linter (Daemon.ts) provides one per request that writes to the client's socket, as it
 * provides the `Console` the commands print their other lines with.
 */
import { Context } from "effect"

/** The run's standard output. */
export interface Output {
  /** Writes `text` as is (no newline added). */
  readonly write: (text: string) => void
  /** Whether the output is a terminal. */
  readonly isTTY: boolean
}

/** The process's stdout. */
export const processOutput = (): Output => ({
  write: (text) => void process.stdout.write(text),
  get isTTY() {
    return process.stdout.isTTY === true
  }
})

/** The current run's output; the process's stdout unless a caller provides another. */
export const CurrentOutput = Context.Reference<Output>("@svc/lint/Output/CurrentOutput", {
  defaultValue: processOutput
})
