/**
 * Reads a suppression import file (`admin import --kind suppressions`, decision 0550) as chunks of E.164 numbers for
 * `SuppressionImport.load`, a block at a time (`JsonLines.LineReader`), never whole in memory. The format is the
 * file's extension:
 *
 * - `.csv`: `phone_number[,reason]`, an optional header line naming those columns; RFC 4180 quoting on one line.
 *   A number is E.164 or 10 US digits.
 * - `.jsonl` / `.ndjson`: create-suppression's body per line (`SuppressionImportLine`), unknown fields refused.
 * - anything else (`.txt`, no extension): the plain text of a national do-not-call registry subscription, one
 *   10-digit US number a line (area code and number, no punctuation), stored as `+1` and the ten digits.
 *
 * A 10-digit number must be a NANP number: area code and exchange each begin with 2-9 (NANP numbering plan,
 * NXX-NXX-XXXX; a 0 or 1 there is no dialable US number, so a line with one is a damaged file). Blank lines are
 * skipped; a number repeated in the file is not an error (it goes in once). A bad line stops the handing over but
 * not the reading, so the error lists the file's problems with their line numbers (up to 20, and how many more),
 * and nothing is imported.
 */
import { isE164 } from "@svc/domain/models/E164.ts"
import {
  isSuppressionSource,
  maxSuppressionReasonLength,
  SuppressionImportLine,
  SuppressionSourceExpected
} from "@svc/domain/models/Suppression.ts"
import { textProblem } from "@svc/domain/models/Text.ts"
import type { SuppressionChunk, SuppressionChunkSource } from "@svc/store/suppressions/SuppressionImport.ts"
import { Effect, type Scope } from "effect"
import * as path from "node:path"
import { nextChunk } from "./ImportChunks.ts"
import { ImportFailed } from "./ImportFailed.ts"
import { lineDecoder, type LineReader, openLines, Problems } from "./JsonLines.ts"

/** @category models */
export type SuppressionFileFormat = "text" | "csv" | "jsonl"

/**
 * The format of `file`, from its extension.
 *
 * @category constructors
 */
export const formatOf = (file: string): SuppressionFileFormat => {
  const ext = path.extname(file).toLowerCase()
  return ext === ".csv" ? "csv" : ext === ".jsonl" || ext === ".ndjson" ? "jsonl" : "text"
}

// NANP: NXX-NXX-XXXX, N = 2-9 (area code and central office code)
const nanp = /^[2-9][0-9]{2}[2-9][0-9]{6}$/

const NANP_RULE = "a 10-digit US number (area code and number, no punctuation; area code and exchange each begin " +
  "with 2-9)"

/**
 * The E.164 form of a registry line's number (`+1` and the ten digits), or `undefined` when it is not one.
 *
 * @category encoding
 */
export const fromTenDigits = (digits: string): string | undefined => nanp.test(digits) ? `+1${digits}` : undefined

/**
 * The fields of one CSV line (RFC 4180 quoting: `"a ""b"", c"` is one field), or a problem.
 *
 * @category encoding
 */
export const csvFields = (line: string): ReadonlyArray<string> | { readonly problem: string } => {
  const fields: Array<string> = []
  let i = 0
  for (;;) {
    if (line[i] === "\"") {
      let value = ""
      i++
      for (;;) {
        const q = line.indexOf("\"", i)
        if (q < 0) return { problem: "a quoted field is not closed on its line (a field cannot span lines)" }
        value += line.slice(i, q)
        if (line[q + 1] === "\"") {
          value += "\""
          i = q + 2
        } else {
          i = q + 1
          break
        }
      }
      fields.push(value)
      if (i === line.length) return fields
      if (line[i] !== ",") return { problem: "a quoted field is followed by text other than a comma" }
      i++
    } else {
      const comma = line.indexOf(",", i)
      if (comma < 0) {
        fields.push(line.slice(i))
        return fields
      }
      fields.push(line.slice(i, comma))
      i = comma + 1
    }
  }
}

const decodeJsonLine = lineDecoder(SuppressionImportLine)

/** Options of {@link open}. */
export interface SuppressionFileOptions {
  /** Numbers per chunk; default 200,000. */
  readonly chunkSize?: number
  /** Overrides the extension. */
  readonly format?: SuppressionFileFormat
}

/**
 * Opens `file` as a chunk source, closed with the scope. Fails at once when the file cannot be read.
 *
 * @category constructors
 */
export const open = (
  file: string,
  options: SuppressionFileOptions = {}
): Effect.Effect<SuppressionChunkSource<ImportFailed>, ImportFailed, Scope.Scope> =>
  Effect.map(openLines(file), (reader) => makeSource(reader, file, options.format ?? formatOf(file), options))

/** Checks a CSV line's reason (empty: none). */
const csvReason = (raw: string | undefined, number: number, problems: Problems): string | null | undefined => {
  if (raw === undefined || raw === "") return null
  const problem = textProblem(raw)
  if (problem !== undefined) {
    problems.add(`line ${number}: reason ${problem}`)
    return undefined
  }
  if (raw.length > maxSuppressionReasonLength) {
    problems.add(`line ${number}: reason must be at most ${maxSuppressionReasonLength} characters`)
    return undefined
  }
  return raw
}

const makeSource = (
  reader: LineReader,
  file: string,
  format: SuppressionFileFormat,
  options: SuppressionFileOptions
): SuppressionChunkSource<ImportFailed> => {
  const chunkSize = Math.max(1, options.chunkSize ?? 200_000)
  const problems = new Problems()
  let firstRows = 0
  let firstBytes = 0
  // CSV: whether the first non-blank line was looked at, and the columns it named (default: number, reason)
  let csvStarted = false
  let columns = { phone: 0, reason: 1 as number | undefined, count: 2 }

  const readCsv = (
    raw: string,
    number: number
  ): { readonly phone: string; readonly reason: string | null } | undefined => {
    const fields = csvFields(raw)
    if (!Array.isArray(fields)) {
      problems.add(`line ${number}: ${(fields as { problem: string }).problem}`)
      return undefined
    }
    const cells = (fields as ReadonlyArray<string>).map((f) => f.trim())
    if (!csvStarted) {
      csvStarted = true
      const names = cells.map((c) => c.toLowerCase())
      if (names.includes("phone_number")) {
        const unknown = names.find((n) => n !== "phone_number" && n !== "reason")
        if (unknown !== undefined) {
          problems.add(
            `line ${number}: ${JSON.stringify(unknown)} is not a column; the columns are phone_number, reason`
          )
        }
        const reason = names.indexOf("reason")
        columns = { phone: names.indexOf("phone_number"), reason: reason < 0 ? undefined : reason, count: names.length }
        return undefined
      }
    }
    if (cells.length > columns.count) {
      problems.add(`line ${number}: ${cells.length} fields; a line has at most ${columns.count} (phone_number, reason)`)
      return undefined
    }
    const value = cells[columns.phone] ?? ""
    const phone = isE164(value) ? value : fromTenDigits(value)
    if (phone === undefined) {
      problems.add(
        `line ${number}: phone_number ${JSON.stringify(value)} must be an E.164 number like ` +
          `+14155550123 or ${NANP_RULE}`
      )
      return undefined
    }
    const reason = csvReason(columns.reason === undefined ? undefined : cells[columns.reason], number, problems)
    return reason === undefined ? undefined : { phone, reason }
  }

  const next = nextChunk<SuppressionChunk>(reader, file, chunkSize, problems, () => {
    const numbers: Array<string> = []
    const reasons: Array<string | null> = []
    const sources: Array<string | null> = []
    const add = (phone: string, reason: string | null, source: string | null) => {
      if (problems.count > 0) return
      numbers.push(phone)
      reasons.push(reason)
      sources.push(source)
    }
    return {
      take: (raw, number) => {
        if (format === "text") {
          const digits = raw.trim()
          if (digits !== "") {
            const phone = fromTenDigits(digits)
            if (phone === undefined) {
              problems.add(`line ${number}: ${JSON.stringify(digits.slice(0, 40))} is not ${NANP_RULE}`)
            } else add(phone, null, null)
          }
        } else if (format === "csv") {
          if (raw.trim() !== "") {
            const row = readCsv(raw.endsWith("\r") ? raw.slice(0, -1) : raw, number)
            if (row !== undefined) add(row.phone, row.reason, null)
          }
        } else {
          const line = decodeJsonLine(raw, number, problems)
          if (line !== undefined) add(line.phone_number, line.reason ?? null, line.source ?? null)
        }
        return numbers.length
      },
      finish: () => {
        if (firstRows === 0) {
          firstRows = numbers.length
          firstBytes = reader.consumed()
        }
        return numbers.length === 0 ? undefined : { numbers, reasons, sources }
      }
    }
  })

  return {
    next,
    // numbers of the whole file at the first chunk's bytes per number
    estimatedRows: () => firstBytes <= 0 ? firstRows : Math.round((reader.size * firstRows) / firstBytes)
  }
}

/**
 * The `--source` of an import, checked (the rule of create-suppression's `source`).
 *
 * @category constructors
 */
export const checkSource = (source: string): Effect.Effect<string, ImportFailed> =>
  isSuppressionSource(source)
    ? Effect.succeed(source)
    : Effect.fail(new ImportFailed({ message: `--source must be ${SuppressionSourceExpected} (got "${source}")` }))

/**
 * The source of lines that give none, when `--source` is not given: `national_dnc` for a registry's plain text,
 * `import` for CSV and JSON Lines.
 *
 * @category constructors
 */
export const defaultSource = (format: SuppressionFileFormat): string => format === "text" ? "national_dnc" : "import"
