/**
 * Reads a contacts import file (JSON Lines, one `ContactImportLine` per line) as chunks of columns for
 * `ContactImport.load`, without holding the file in memory (`JsonLines.LineReader`): each line is decoded with
 * unknown fields refused, and a chunk is handed over every `chunkSize` contacts.
 *
 * A bad line stops the handing over but not the reading (ImportChunks.ts), so the error lists the file's problems.
 * Duplicates within the file (a phone number or a contact id on two lines) are problems too, naming both
 * lines: the org keeps one contact per number (spec, vendor).
 */
import { ContactImportLine, decodePlainLine } from "@svc/domain/models/ContactImportLine.ts"
import type { OrgId } from "@svc/domain/models/Ids.ts"
import type { ChunkSource, ImportChunk } from "@svc/store/contacts/ContactImport.ts"
import { emptyColumns, uuidV7 } from "@svc/store/contacts/ContactSeed.ts"
import { Effect, type Scope } from "effect"
import { nextChunk } from "./ImportChunks.ts"
import type { ImportFailed } from "./ImportFailed.ts"
import { lineDecoder, type LineReader, openLines, Problems } from "./JsonLines.ts"

const decodeLine = lineDecoder(ContactImportLine, decodePlainLine)

/** Options of {@link open}. */
export interface ContactFileOptions {
  readonly orgId: OrgId
  /** Contacts per chunk; default 20,000 (the seed's). */
  readonly chunkSize?: number
  /** The import's time: `created_timestamp` and `user_modified_timestamp` of lines without them. */
  readonly now: number
}

/**
 * Opens `file` as a chunk source, closed with the scope. Fails at once when the file cannot be read.
 *
 * @category constructors
 */
export const open = (
  file: string,
  options: ContactFileOptions
): Effect.Effect<ChunkSource<ImportFailed>, ImportFailed, Scope.Scope> =>
  Effect.map(openLines(file), (reader) => makeSource(reader, file, options))

const makeSource = (reader: LineReader, file: string, options: ContactFileOptions): ChunkSource<ImportFailed> => {
  const chunkSize = Math.max(1, options.chunkSize ?? 20_000)
  const problems = new Problems()
  const phones = new Map<string, number>()
  const ids = new Map<string, number>()
  let counter = 0
  let firstRows = 0
  let firstBytes = 0

  const next = nextChunk<ImportChunk>(reader, file, chunkSize, problems, () => {
    const out = emptyColumns()
    const lines: Array<number> = []
    return {
      take: (raw, number) => {
        const line = decodeLine(raw, number, problems)
        if (line !== undefined) {
          const seenPhone = phones.get(line.phone_number)
          const seenId = line.contact_id === undefined ? undefined : ids.get(line.contact_id)
          if (line.org_id !== undefined && line.org_id !== options.orgId) {
            problems.add(
              `line ${number}: org_id ${JSON.stringify(line.org_id)} is not the org imported into ` +
                `(${options.orgId}); a contact cannot move to another org`
            )
          } else if (seenPhone !== undefined) {
            problems.add(`line ${number}: phone_number ${line.phone_number} is also on line ${seenPhone}`)
          } else if (seenId !== undefined) {
            problems.add(`line ${number}: contact_id ${line.contact_id} is also on line ${seenId}`)
          } else {
            phones.set(line.phone_number, number)
            if (line.contact_id !== undefined) ids.set(line.contact_id, number)
            if (problems.count === 0) {
              const fields: Record<string, string | number | boolean> = {}
              for (const [key, value] of Object.entries(line.custom_fields ?? {})) {
                if (value !== null) fields[key] = value
              }
              out.orgId.push(options.orgId)
              // a generated id of the import's instant is unique by its counter (uuidV7); an id in the file is kept
              out.contactId.push(line.contact_id ?? uuidV7(options.now, counter++, Math.random()))
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
          }
        }
        return lines.length
      },
      finish: () => {
        if (firstRows === 0) {
          firstRows = lines.length
          firstBytes = reader.consumed()
        }
        return lines.length === 0 ? undefined : { columns: out, lines }
      }
    }
  })

  return {
    next,
    // rows of the whole file at the first chunk's bytes per row
    estimatedRows: () => firstBytes <= 0 ? firstRows : Math.round((reader.size * firstRows) / firstBytes)
  }
}
