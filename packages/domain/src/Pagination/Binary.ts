/**
 * The byte-level pieces of a pagination key body: unsigned LEB128 varints, zigzag-encoded safe
 * integers, IEEE 754 doubles and length-prefixed strings.
 *
 * Strings are written as WTF-8: UTF-8 that also encodes unpaired UTF-16 surrogates as three-byte
 * sequences. JavaScript strings (and so ids and sort values) may hold unpaired surrogates, which
 * `TextEncoder` would replace with U+FFFD; WTF-8 keeps every string intact, so a position always
 * decodes to exactly the value it was encoded from. Readers validate everything and report failure
 * with `undefined`/-1 instead of throwing.
 *
 * @internal
 */

const doubles = new Float64Array(1)
const doubleBytes = new Uint8Array(doubles.buffer)
// IEEE 754 doubles go on the wire big-endian, whatever the platform's byte order.
const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1

/**
 * The most bytes {@link writeString} may need for `value`: a length prefix and three bytes per
 * UTF-16 code unit.
 *
 * @category encoding
 */
export const maxStringBytes = (value: string): number => 5 + 3 * value.length

/**
 * Writes `value` (0 <= value < 2^31) as an unsigned LEB128 varint and returns the next offset.
 *
 * @category encoding
 */
export const writeVarint = (out: Uint8Array, offset: number, value: number): number => {
  let v = value
  while (v >= 0x80) {
    out[offset++] = (v & 0x7f) | 0x80
    v >>>= 7
  }
  out[offset++] = v
  return offset
}

/**
 * Writes a safe integer zigzag-encoded (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...) as a varint of at
 * most 8 bytes, so a millisecond timestamp takes 6 bytes instead of a double's 8. Returns the next
 * offset.
 *
 * @category encoding
 */
export const writeSafeInteger = (out: Uint8Array, offset: number, value: number): number => {
  // The zigzag number 2m + sign reaches 2^54, past exact doubles, so it is never formed: the first
  // group takes the sign and m's low 6 bits, later groups take m's higher bits 7 at a time.
  const negative = value < 0
  const m = negative ? -value - 1 : value
  let group = (m % 64) * 2 + (negative ? 1 : 0)
  let rest = Math.floor(m / 64)
  while (rest > 0) {
    out[offset++] = group | 0x80
    group = rest % 0x80
    rest = Math.floor(rest / 0x80)
  }
  out[offset++] = group
  return offset
}

/**
 * Writes `value` as an 8-byte big-endian IEEE 754 double and returns the next offset.
 *
 * @category encoding
 */
export const writeDouble = (out: Uint8Array, offset: number, value: number): number => {
  doubles[0] = value
  for (let i = 0; i < 8; i++) out[offset + i] = doubleBytes[littleEndian ? 7 - i : i]!
  return offset + 8
}

/**
 * Writes `value` as a varint byte length followed by its WTF-8 bytes and returns the next offset.
 * `out` must have {@link maxStringBytes} free bytes from `offset`.
 *
 * @category encoding
 */
export const writeString = (out: Uint8Array, offset: number, value: string): number => {
  const length = value.length
  if (length < 0x80) {
    // Optimistically ASCII with a one-byte length prefix; the general path below redoes it if not.
    out[offset] = length
    let i = 0
    for (; i < length; i++) {
      const c = value.charCodeAt(i)
      if (c >= 0x80) break
      out[offset + 1 + i] = c
    }
    if (i === length) return offset + 1 + length
  }
  // Leave room for the longest prefix, then move the bytes if the real prefix is shorter.
  const reserved = 5
  let o = offset + reserved
  for (let i = 0; i < length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0x80) {
      out[o++] = c
    } else if (c < 0x800) {
      out[o++] = 0xc0 | (c >>> 6)
      out[o++] = 0x80 | (c & 0x3f)
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < length) {
      const d = value.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
        out[o++] = 0xf0 | (cp >>> 18)
        out[o++] = 0x80 | ((cp >>> 12) & 0x3f)
        out[o++] = 0x80 | ((cp >>> 6) & 0x3f)
        out[o++] = 0x80 | (cp & 0x3f)
        i++
      } else {
        out[o++] = 0xe0 | (c >>> 12)
        out[o++] = 0x80 | ((c >>> 6) & 0x3f)
        out[o++] = 0x80 | (c & 0x3f)
      }
    } else {
      out[o++] = 0xe0 | (c >>> 12)
      out[o++] = 0x80 | ((c >>> 6) & 0x3f)
      out[o++] = 0x80 | (c & 0x3f)
    }
  }
  const byteLength = o - offset - reserved
  const start = writeVarint(out, offset, byteLength)
  out.copyWithin(start, offset + reserved, o)
  return start + byteLength
}

// Function.prototype.apply passes at most some 65k arguments: go in chunks far below that.
const CHUNK = 8192

/**
 * The string of the UTF-16 code units `codes`, built in one go: appending character by character
 * leaves a rope that the string's first reader must flatten, which costs more than the decoding.
 *
 * @category encoding
 */
export const fromCharCodes = (codes: Array<number>): string => {
  if (codes.length <= CHUNK) return String.fromCharCode.apply(null, codes)
  let out = ""
  for (let i = 0; i < codes.length; i += CHUNK) out += String.fromCharCode.apply(null, codes.slice(i, i + CHUNK))
  return out
}

/**
 * A cursor over a byte range for the readers below. Each reader advances `offset` and returns
 * `undefined` (or -1 for numbers that cannot be negative) on malformed or truncated input.
 *
 * @category models
 */
export interface Reader {
  readonly bytes: Uint8Array
  offset: number
  readonly end: number
}

/**
 * Reads an unsigned varint below 2^31 written by {@link writeVarint}; -1 when malformed or not
 * minimal (a trailing zero group would give the same number a second encoding).
 *
 * @category encoding
 */
export const readVarint = (reader: Reader): number => {
  let result = 0
  for (let shift = 0; shift < 35; shift += 7) {
    if (reader.offset >= reader.end) return -1
    const byte = reader.bytes[reader.offset++]!
    result += (byte & 0x7f) * 2 ** shift
    if (byte < 0x80) return (byte === 0 && shift > 0) || result >= 0x80000000 ? -1 : result
  }
  return -1
}

/**
 * Reads a safe integer written by {@link writeSafeInteger}; `undefined` when malformed.
 *
 * @category encoding
 */
export const readSafeInteger = (reader: Reader): number | undefined => {
  if (reader.offset >= reader.end) return undefined
  const first = reader.bytes[reader.offset++]!
  let m = (first & 0x7f) >>> 1
  let more = first >= 0x80
  for (let scale = 64; more; scale *= 0x80) {
    // 8 groups hold 56 bits, enough for any safe integer; more can only be garbage.
    if (reader.offset >= reader.end || scale > 2 ** 48) return undefined
    const byte = reader.bytes[reader.offset++]!
    if (byte === 0) return undefined
    m += (byte & 0x7f) * scale
    more = byte >= 0x80
  }
  const value = (first & 1) === 1 ? -m - 1 : m
  return Number.isSafeInteger(value) ? value : undefined
}

/**
 * Reads an 8-byte big-endian double; `undefined` when truncated.
 *
 * @category encoding
 */
export const readDouble = (reader: Reader): number | undefined => {
  if (reader.end - reader.offset < 8) return undefined
  for (let i = 0; i < 8; i++) doubleBytes[littleEndian ? 7 - i : i] = reader.bytes[reader.offset + i]!
  reader.offset += 8
  return doubles[0]!
}

const continuation = (bytes: Uint8Array, index: number): number => {
  const byte = bytes[index]!
  return (byte & 0xc0) === 0x80 ? byte & 0x3f : -1
}

/**
 * Reads a string written by {@link writeString}; `undefined` when the length runs past the end or
 * the bytes are not well-formed WTF-8 (overlong forms, code points above U+10FFFF and surrogate
 * pairs spelled as two three-byte sequences are all rejected, keeping one encoding per string).
 *
 * @category encoding
 */
export const readString = (reader: Reader): string | undefined => {
  const length = readVarint(reader)
  if (length < 0 || length > reader.end - reader.offset) return undefined
  const bytes = reader.bytes
  const end = reader.offset + length
  // UTF-16 code units, turned into a string once at the end.
  const units: Array<number> = []
  let previousHighSurrogate = false
  let i = reader.offset
  while (i < end) {
    const a = bytes[i]!
    let unit: number
    if (a < 0x80) {
      unit = a
      i += 1
    } else if (a >= 0xc2 && a <= 0xdf && i + 1 < end) {
      const b = continuation(bytes, i + 1)
      if (b < 0) return undefined
      unit = ((a & 0x1f) << 6) | b
      i += 2
    } else if (a >= 0xe0 && a <= 0xef && i + 2 < end) {
      const b = continuation(bytes, i + 1)
      const c = continuation(bytes, i + 2)
      if ((b | c) < 0) return undefined
      unit = ((a & 0x0f) << 12) | (b << 6) | c
      if (unit < 0x800) return undefined
      // A low surrogate right after a high one must have been written as one four-byte sequence.
      if (previousHighSurrogate && unit >= 0xdc00 && unit <= 0xdfff) return undefined
      i += 3
    } else if (a >= 0xf0 && a <= 0xf4 && i + 3 < end) {
      const b = continuation(bytes, i + 1)
      const c = continuation(bytes, i + 2)
      const d = continuation(bytes, i + 3)
      if ((b | c | d) < 0) return undefined
      const cp = ((a & 0x07) << 18) | (b << 12) | (c << 6) | d
      if (cp < 0x10000 || cp > 0x10ffff) return undefined
      units.push(0xd800 + ((cp - 0x10000) >>> 10))
      unit = 0xdc00 + ((cp - 0x10000) & 0x3ff)
      i += 4
    } else {
      return undefined
    }
    units.push(unit)
    previousHighSurrogate = unit >= 0xd800 && unit <= 0xdbff
  }
  reader.offset = end
  return fromCharCodes(units)
}
