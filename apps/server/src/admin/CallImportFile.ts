/**
 * Reads a calls import file (JSON Lines, one `CallImportLine` per line, the get-call shape) as chunks of calls for
 * `CallImport.load`, a block at a time (`JsonLines.LineReader`). As for contacts: unknown fields and values svc
 * cannot keep are errors naming the line, a call id on two lines names both, and a bad line stops the handing over
 * but not the reading, so the error lists the file's problems (up to 20, and how many more).
 */
import { CallImportLine } from "@svc/domain/models/CallImportLine.ts"
import { type CallChunk, type ImportedCall, outcomeOf } from "@svc/store/calls/CallImport.ts"
import { Effect, type Scope } from "effect"
import { nextChunk } from "./ImportChunks.ts"
import type { ImportFailed } from "./ImportFailed.ts"
import { lineDecoder, type LineReader, openLines, Problems } from "./JsonLines.ts"

const decodeLine = lineDecoder(CallImportLine)

/** The call as the calls table keeps it. */
const toImported = (line: CallImportLine): ImportedCall => {
  const { custom_analysis_data, ...named } = line.call_analysis ?? {}
  return {
    call_id: line.call_id,
    batch_call_id: line.batch_call_id ?? null,
    from_number: line.from_number,
    to_number: line.to_number,
    agent_id: line.agent_id ?? null,
    agent_version: line.agent_version ?? null,
    call_status: line.call_status,
    outcome: outcomeOf(line.call_status, line.disconnection_reason),
    disconnection_reason: line.disconnection_reason ?? null,
    start_timestamp: line.start_timestamp ?? null,
    end_timestamp: line.end_timestamp ?? null,
    duration_ms: line.duration_ms ?? null,
    // call_json lifts the four named members back out of the analysis data and returns the rest as
    // custom_analysis_data (migration 0012); the line's decoder refused custom keys that clash with them
    analysis: { ...custom_analysis_data, ...named },
    metadata_json: line.metadata === undefined ? null : JSON.stringify(line.metadata),
    dynamic_variables: line.svc_llm_dynamic_variables ?? null,
    custom_sip_headers: line.custom_sip_headers ?? null
  }
}

/**
 * Opens `file` and returns the effect that hands over its next chunk (undefined at the end); closed with the scope.
 *
 * @category constructors
 */
export const open = (
  file: string,
  options: { readonly chunkSize?: number } = {}
): Effect.Effect<Effect.Effect<CallChunk | undefined, ImportFailed>, ImportFailed, Scope.Scope> =>
  Effect.map(openLines(file), (reader) => makeNext(reader, file, Math.max(1, options.chunkSize ?? 5_000)))

const makeNext = (reader: LineReader, file: string, chunkSize: number) => {
  const problems = new Problems()
  const ids = new Map<string, number>()
  return nextChunk<CallChunk>(reader, file, chunkSize, problems, () => {
    const calls: Array<ImportedCall> = []
    const lines: Array<number> = []
    return {
      take: (raw, number) => {
        const line = decodeLine(raw, number, problems)
        if (line !== undefined) {
          const seen = ids.get(line.call_id)
          if (seen !== undefined) problems.add(`line ${number}: call_id ${line.call_id} is also on line ${seen}`)
          else {
            ids.set(line.call_id, number)
            if (problems.count === 0) {
              calls.push(toImported(line))
              lines.push(number)
            }
          }
        }
        return calls.length
      },
      finish: () => calls.length === 0 ? undefined : { calls, lines }
    }
  })
}
