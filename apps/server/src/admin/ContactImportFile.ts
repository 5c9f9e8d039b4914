/**
 * Reads a contacts import file (JSON Lines, one `ContactImportLine` per line) as chunks of columns for
 * `ContactImport.load`, without holding the file in memory: blocks of 1 MiB are read and cut into lines, each line
 * is decoded with unknown fields refused, and a chunk is handed over every `chunkSize` contacts.
 *
 * A bad line does not stop the reading: the rest of the file is still decoded (nothing more is handed over), so
 * the error lists up to 20 problems with their line numbers and how many more there were, and the import inserts
 * nothing. Duplicates within the file (a phone number or a contact id on two lines) are problems too, naming both
 * lines: the org keeps one contact per number (spec, vendor).
 */
import { ContactImportLine } from "@svc/domain/models/ContactImportLine.ts"
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import type { ChunkSource, ImportChunk } from "@svc/store/ContactImport.ts"
import { type ContactColumns, emptyColumns, uuidV7 } from "@svc/store/ContactSeed.ts"
import { Effect, Schema, type Scope } from "effect"
import * as fs from "node:fs"
import { StringDecoder } from "node:string_decoder"
import { ImportFailed } from "./ImportFailed.ts"

const MAX_LISTED = 20
const BLOCK = 1 << 20

const decodeLine = Schema.decodeUnknownExit(ContactImportLine, { onExcessProperty: "error" })

/** The problems of a file so far: the first MAX_LISTED, and how many in all. */
class Problems {
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

/** Options of {@link open}. */
export interface ContactFileOptions {
  readonly orgId: string
  /** Contacts per chunk; default 20,000 (the seed's). */
  readonly chunkSize?: number
  /** The import's time: `created_timestamp` and `user_modified_timestamp` of lines without them. */
  readonly now: number
}

/**
 * Opens `file` as a chunk source. Fails at once when the file cannot be read.
 *
 * @category constructors
 */
export const open = (
  file: string,
  options: ContactFileOptions
): Effect.Effect<ChunkSource<ImportFailed>, ImportFailed, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const fd = fs.openSync(file, "r")
        try {
          return { fd, size: fs.fstatSync(fd).size }
        } catch (error) {
          fs.closeSync(fd)
          throw error
        }
      },
      catch: (error) => new ImportFailed({ message: `cannot read ${file}: ${(error as Error).message}` })
    }).pipe(Effect.map(({ fd, size }) => makeSource(fd, size, file, options))),
    (source) => Effect.sync(source.close)
  )

const makeSource = (
  fd: number,
  size: number,
  file: string,
  options: ContactFileOptions
): ChunkSource<ImportFailed> & { readonly close: () => void } => {
  const chunkSize = Math.max(1, options.chunkSize ?? 20_000)
  const decoder = new StringDecoder("utf8")
  const buffer = Buffer.allocUnsafe(BLOCK)
  const problems = new Problems()
  const phones = new Map<string, number>()
  const ids = new Map<string, number>()
  let pending: Array<string> = []
  let pendingAt = 0
  let rest = ""
  let lineNumber = 0
  let bytesRead = 0
  let eof = false
  let closed = false
  let counter = 0
  let firstRows = 0
  let firstBytes = 0

  const close = () => {
    if (!closed) fs.closeSync(fd)
    closed = true
  }

  /** The next line of the file, or undefined at its end. */
  const nextLine = (): string | undefined => {
    while (pendingAt >= pending.length) {
      if (eof) return undefined
      const n = fs.readSync(fd, buffer, 0, BLOCK, null)
      bytesRead += n
      let text: string
      if (n === 0) {
        eof = true
        text = rest + decoder.end()
        rest = ""
        pending = text === "" ? [] : [text]
      } else {
        text = rest + decoder.write(buffer.subarray(0, n))
        const parts = text.split("\n")
        rest = parts.pop()!
        pending = parts
      }
      pendingAt = 0
    }
    return pending[pendingAt++]
  }

  const addLine = (raw: string, out: ContactColumns, lines: Array<number>) => {
    const number = ++lineNumber
    const text = number === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw
    if (text.trim() === "") return
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      return problems.add(`line ${number}: not valid JSON`)
    }
    const exit = decodeLine(json)
    if (exit._tag === "Failure") {
      const error = exit.cause.reasons.find((r) => r._tag === "Fail")
      return problems.add(
        `line ${number}: ${
          error && Schema.isSchemaError(error.error)
            ? formatDecodeError(error.error, { input: json, root: "record" })
            : "invalid record"
        }`
      )
    }
    const line = exit.value
    if (line.org_id !== undefined && line.org_id !== options.orgId) {
      return problems.add(
        `line ${number}: org_id ${JSON.stringify(line.org_id)} is not the org imported into (${options.orgId}); ` +
          "a contact cannot move to another org"
      )
    }
    const seenPhone = phones.get(line.phone_number)
    if (seenPhone !== undefined) {
      return problems.add(`line ${number}: phone_number ${line.phone_number} is also on line ${seenPhone}`)
    }
    phones.set(line.phone_number, number)
    if (line.contact_id !== undefined) {
      const seenId = ids.get(line.contact_id)
      if (seenId !== undefined) {
        return problems.add(`line ${number}: contact_id ${line.contact_id} is also on line ${seenId}`)
      }
      ids.set(line.contact_id, number)
    }
    if (problems.count > 0) return
    const fields: Record<string, string | number | boolean> = {}
    for (const [key, value] of Object.entries(line.custom_fields ?? {})) if (value !== null) fields[key] = value
    // generated ids of the import's instant are distinct by their counter (uuidV7); an id given in the file is kept
    const contactId = line.contact_id ?? uuidV7(options.now, counter++, Math.random())
    if (line.contact_id === undefined && ids.has(contactId)) {
      return problems.add(`line ${number}: contact_id ${contactId} (generated) is also on line ${ids.get(contactId)}`)
    }
    out.orgId.push(options.orgId)
    out.contactId.push(contactId)
    out.phoneNumber.push(line.phone_number)
    out.firstName.push(line.first_name ?? null)
    out.lastName.push(line.last_name ?? null)
    out.externalId.push(line.external_id ?? null)
    out.doNotCall.push(line.do_not_call ?? false)
    out.tags.push([...new Set(line.contact_tags ?? line.tags ?? [])].join("\u001f"))
    out.customFields.push(fields)
    out.conversationCount.push(line.conversation_count ?? 0)
    out.lastConversationTimestamp.push(line.last_conversation_timestamp ?? null)
    out.createdTimestamp.push(line.created_timestamp ?? options.now)
    out.userModifiedTimestamp.push(line.user_modified_timestamp ?? options.now)
    lines.push(number)
  }

  const next = Effect.suspend(() => {
    if (closed) {
      return problems.count > 0 ? Effect.fail(problems.toError()) : Effect.succeed(undefined)
    }
    try {
      const columns = emptyColumns()
      const lines: Array<number> = []
      let raw = nextLine()
      while (raw !== undefined) {
        addLine(raw, columns, lines)
        // once a line is bad nothing more is handed over: read on only to list the other problems
        if (problems.count === 0 && lines.length >= chunkSize) break
        raw = nextLine()
      }
      if (raw === undefined) close()
      if (problems.count > 0) {
        close()
        return Effect.fail(problems.toError())
      }
      if (firstRows === 0) {
        firstRows = lines.length
        firstBytes = bytesRead - Buffer.byteLength(rest) - pending.slice(pendingAt).reduce(
          (sum, l) => sum + Buffer.byteLength(l) + 1,
          0
        )
      }
      return Effect.succeed(lines.length === 0 ? undefined : { columns, lines } satisfies ImportChunk)
    } catch (error) {
      close()
      return Effect.fail(new ImportFailed({ message: `cannot read ${file}: ${(error as Error).message}` }))
    }
  })

  return {
    next,
    close,
    // rows of the whole file at the first chunk's bytes per row
    estimatedRows: () => firstBytes <= 0 ? firstRows : Math.round((size * firstRows) / firstBytes)
  }
}
