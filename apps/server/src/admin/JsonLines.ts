/**
 * What the streaming importers share: a file read as lines in blocks of 1 MiB (never whole in memory), lines
 * decoded with unknown fields refused, and the list of problems an import reports (the first 20, and how many more).
 */
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import { Effect, Schema, type Scope } from "effect"
import * as fs from "node:fs"
import { StringDecoder } from "node:string_decoder"
import { ImportFailed } from "./ImportFailed.ts"

const MAX_LISTED = 20
const BLOCK = 1 << 20

/** The problems of a file so far: the first MAX_LISTED, and how many in all. */
export class Problems {
  readonly listed: Array<string> = []
  count = 0
  add(text: string) {
    this.count++
    if (this.listed.length < MAX_LISTED) this.listed.push(text)
  }
  toError(): ImportFailed {
    const more = this.count > MAX_LISTED ? `; and ${this.count - MAX_LISTED} more` : ""
    return new ImportFailed({ message: `nothing imported: ${this.listed.join("; ")}${more}` })
  }
}

/** A file's lines, read a block at a time. */
export class LineReader {
  private readonly decoder = new StringDecoder("utf8")
  private readonly buffer = Buffer.allocUnsafe(BLOCK)
  private pending: Array<string> = []
  private pendingAt = 0
  private rest = ""
  private eof = false
  private closed = false
  /** Number of the line `next` returned last (from 1). */
  lineNumber = 0
  bytesRead = 0

  readonly fd: number
  readonly size: number

  constructor(fd: number, size: number) {
    this.fd = fd
    this.size = size
  }

  /** The next line (a UTF-8 BOM at the start of the file removed), or undefined at the end of the file. */
  next(): string | undefined {
    while (this.pendingAt >= this.pending.length) {
      if (this.eof) return undefined
      const n = fs.readSync(this.fd, this.buffer, 0, BLOCK, null)
      this.bytesRead += n
      if (n === 0) {
        this.eof = true
        const text = this.rest + this.decoder.end()
        this.rest = ""
        this.pending = text === "" ? [] : [text]
      } else {
        const parts = (this.rest + this.decoder.write(this.buffer.subarray(0, n))).split("\n")
        this.rest = parts.pop()!
        this.pending = parts
      }
      this.pendingAt = 0
    }
    const line = this.pending[this.pendingAt++]!
    return ++this.lineNumber === 1 && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line
  }

  /** Bytes of the file consumed by the lines returned so far. */
  consumed(): number {
    let unread = Buffer.byteLength(this.rest)
    for (let i = this.pendingAt; i < this.pending.length; i++) unread += Buffer.byteLength(this.pending[i]!) + 1
    return this.bytesRead - unread
  }

  close() {
    if (!this.closed) fs.closeSync(this.fd)
    this.closed = true
  }
}

/** Opens `file` for reading in the scope; fails with ImportFailed when it cannot be read. */
export const openLines = (file: string): Effect.Effect<LineReader, ImportFailed, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const fd = fs.openSync(file, "r")
        try {
          return new LineReader(fd, fs.fstatSync(fd).size)
        } catch (error) {
          fs.closeSync(fd)
          throw error
        }
      },
      catch: (error) => new ImportFailed({ message: `cannot read ${file}: ${(error as Error).message}` })
    }),
    (reader) => Effect.sync(() => reader.close())
  )

/**
 * A line decoder: JSON, then `schema` with unknown fields refused (decision 0530). Blank lines are `undefined`;
 * a bad line is added to `problems` and is `undefined` too. `plain`, when given, is tried first: a hand-written
 * check that accepts only lines the schema accepts, answering `undefined` for the schema to decide.
 */
export const lineDecoder = <A>(schema: Schema.Codec<A, unknown>, plain?: (json: unknown) => A | undefined) => {
  const decode = Schema.decodeUnknownExit(schema, { onExcessProperty: "error" })
  return (text: string, number: number, problems: Problems): A | undefined => {
    if (text.trim() === "") return undefined
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      problems.add(`line ${number}: not valid JSON`)
      return undefined
    }
    const fast = plain?.(json)
    if (fast !== undefined) return fast
    const exit = decode(json)
    if (exit._tag === "Success") return exit.value
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    problems.add(
      `line ${number}: ${
        error && Schema.isSchemaError(error.error)
          ? formatDecodeError(error.error, { input: json, root: "record" })
          : "invalid record"
      }`
    )
    return undefined
  }
}
