/**
 * The chunking both import files share (decision 0530): lines are read a block at a time and handed to a chunk being
 * built until it holds `chunkSize` of them. A bad line does not stop the reading: the rest of the file is still
 * decoded (nothing more is handed over), so the error lists up to 20 problems with their line numbers and how many
 * more there were, and the import inserts nothing.
 */
import { Effect } from "effect"
import { ImportFailed } from "./ImportFailed.ts"
import type { LineReader, Problems } from "./JsonLines.ts"

/**
 * One chunk being built: `take` decodes line `number` (adding to `problems` what is wrong with it) and returns how
 * many lines the chunk holds; `finish` hands the chunk over once no problem was found (undefined: it is empty).
 */
export interface ChunkBuilder<Chunk> {
  readonly take: (raw: string, number: number) => number
  readonly finish: () => Chunk | undefined
}

/**
 * The effect that hands over the next chunk of `reader`'s lines (undefined at the end), each chunk built by a fresh
 * `builder()`; fails with the problems found, or when `file` cannot be read.
 *
 * @category constructors
 */
export const nextChunk = <Chunk>(
  reader: LineReader,
  file: string,
  chunkSize: number,
  problems: Problems,
  builder: () => ChunkBuilder<Chunk>
): Effect.Effect<Chunk | undefined, ImportFailed> => {
  let done = false
  return Effect.suspend(() => {
    if (done) return problems.count > 0 ? Effect.fail(problems.toError()) : Effect.succeed(undefined)
    try {
      const chunk = builder()
      let raw = reader.next()
      while (raw !== undefined) {
        const size = chunk.take(raw, reader.lineNumber)
        // once a line is bad nothing more is handed over: read on only to list the other problems
        if (problems.count === 0 && size >= chunkSize) break
        raw = reader.next()
      }
      if (raw === undefined) done = true
      if (problems.count > 0) {
        done = true
        return Effect.fail(problems.toError())
      }
      return Effect.succeed(chunk.finish())
    } catch (error) {
      done = true
      return Effect.fail(new ImportFailed({ message: `cannot read ${file}: ${(error as Error).message}` }))
    }
  })
}
