/**
 * The byte layout of a pagination key (docs/decisions/0102-cursor-keys.md): where the marker, the org tag, the
 * query tag, the position and the MAC sit, how the two tags are derived, and how a position is read back from a
 * key's authenticated bytes. `../Pagination.ts` signs, checks and encodes keys with these pieces.
 */
import type { CursorPosition, SortValue } from "../Pagination.ts"
import * as Base64Url from "./Base64Url.ts"
import * as Binary from "./Binary.ts"
import { sha256 } from "./Sha256.ts"

// Layout (docs/decisions/0102-cursor-keys.md):
//   [0]      0xA0 | version   high nibble marks "a pagination key", low nibble is the version
//   [1, 5)   org tag          first 4 bytes of SHA-256("svc/pagination/org\0" + orgId)
//   [5, 11)  query tag        the 6 bytes of the QueryFingerprint
//   [11]     sort value kind  1 safe integer (zigzag varint), 2 double, 3 string
//   ...      sort value, then id (varint byte length + WTF-8)
//   last 16  HMAC-SHA-256(secret, all bytes before it), leftmost 16 bytes
export const MARKER = 0xa0
// Short tags keep a key with a 36-character id inside one SHA-256 block (55 bytes) of MAC input:
// the tags sit under the MAC, so they cannot be forged, only collide by chance, and a collision is
// harmless because a store always scopes rows to the caller's org (see the decision record).
export const ORG_TAG_BYTES = 4
export const QUERY_TAG_BYTES = 6
export const ORG_TAG_AT = 1
export const QUERY_TAG_AT = ORG_TAG_AT + ORG_TAG_BYTES
export const BODY_AT = QUERY_TAG_AT + QUERY_TAG_BYTES
export const MAC_BYTES = 16
// QUERY_TAG_BYTES in unpadded base64url
const FINGERPRINT_LENGTH = 8
export const KIND_INTEGER = 1
export const KIND_DOUBLE = 2
export const KIND_STRING = 3
// kind + shortest sort value (1-byte varint) + empty id (1-byte length)
export const MIN_KEY_BYTES = BODY_AT + 3 + MAC_BYTES

/** The UTF-8 (WTF-8) bytes of `text`. */
export const utf8 = (text: string): Uint8Array => {
  const out = new Uint8Array(Binary.maxStringBytes(text))
  const end = Binary.writeString(out, 0, text)
  // Skip the length prefix that writeString puts first.
  const reader: Binary.Reader = { bytes: out, offset: 0, end }
  Binary.readVarint(reader)
  return out.slice(reader.offset, end)
}

/** The bytes hashed for a label and a text: the label, a NUL, the text. */
export const labelled = (label: string, text: string): Uint8Array => utf8(label + "\0" + text)

// Org tags are a hash per org id; servers see few orgs, so remember them (bounded, cleared when full).
const orgTags = new Map<string, Uint8Array>()
const ORG_TAG_CACHE_SIZE = 4096

/** The org tag of `orgId`: the first 4 bytes of SHA-256("svc/pagination/org\\0" + orgId). */
export const orgTag = (orgId: string): Uint8Array => {
  let tag = orgTags.get(orgId)
  if (tag === undefined) {
    tag = sha256(labelled("svc/pagination/org", orgId)).subarray(0, ORG_TAG_BYTES)
    if (orgTags.size >= ORG_TAG_CACHE_SIZE) orgTags.clear()
    orgTags.set(orgId, tag)
  }
  return tag
}

// The last fingerprint seen and its bytes: a request encodes and decodes under the same one.
let lastFingerprint = ""
const lastQueryTag = new Uint8Array(QUERY_TAG_BYTES)

/** Writes the query-tag bytes of `fingerprint` to `out` at `offset`. */
export const writeQueryTag = (fingerprint: string, out: Uint8Array, offset: number): void => {
  if (fingerprint !== lastFingerprint) {
    if (
      fingerprint.length !== FINGERPRINT_LENGTH ||
      Base64Url.decodeInto(fingerprint, lastQueryTag) !== QUERY_TAG_BYTES
    ) {
      // Only a fingerprint forged with a type cast gets here; hashing it still binds the key to it.
      lastQueryTag.set(sha256(labelled("svc/pagination/query-tag", fingerprint)).subarray(0, QUERY_TAG_BYTES))
    }
    lastFingerprint = fingerprint
  }
  for (let i = 0; i < QUERY_TAG_BYTES; i++) out[offset + i] = lastQueryTag[i]!
}

/** The position in a key's authenticated bytes `[0, end)`, or `undefined` when they do not hold one. */
export const readPosition = (bytes: Uint8Array, end: number): CursorPosition | undefined => {
  const reader: Binary.Reader = { bytes, offset: BODY_AT + 1, end }
  let sortValue: SortValue | undefined
  switch (bytes[BODY_AT]) {
    case KIND_INTEGER:
      sortValue = Binary.readSafeInteger(reader)
      break
    case KIND_DOUBLE:
      sortValue = Binary.readDouble(reader)
      if (sortValue !== undefined && !Number.isFinite(sortValue)) return undefined
      break
    case KIND_STRING:
      sortValue = Binary.readString(reader)
      break
  }
  if (sortValue === undefined) return undefined
  const id = Binary.readString(reader)
  return id === undefined || reader.offset !== end ? undefined : { sortValue, id }
}
