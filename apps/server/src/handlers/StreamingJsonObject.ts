/**
 * A JSON object read from a byte stream without holding it whole: one member, an array (create-batch-call's
 * `tasks`), comes out element by element as its bytes arrive; every other member is kept as JSON text, to be read
 * once the body has ended. What it accepts is exactly what `JSON.parse` of the whole body decoded as UTF-8
 * accepts (a leading byte-order mark is skipped, as `TextDecoder` does; invalid UTF-8 becomes U+FFFD): the
 * structure around the elements is checked here, each element and each other member by `JSON.parse` of its own
 * text. Decision 0303 says why (a 200 MB body parsed whole costs 6-16 times its size in memory).
 *
 * Bounded by design: an element may hold at most `maxElementBytes` bytes, and everything outside the streamed
 * array (the other members and their keys, or a body that is not an object) at most `maxRestBytes`.
 * Decisions where `JSON.parse` would not fail but streaming cannot follow it: the streamed member given twice
 * (`JSON.parse` keeps the last) is refused.
 *
 * While it scans an element's bytes it also notes whether the element may break a structure rule of request bodies
 * (JsonLimits, decision 0106: nested deeper than `flagDepth` levels of its own, or a number of 16 or more integer
 * digits or with an exponent), so that the caller walks only such elements ({@link StreamingJsonObject.mayBreakRules});
 * a "no" is never wrong, a "yes" only costs a walk.
 */

/** Why the body was refused. */
export type Failure =
  | { readonly _tag: "Syntax" }
  | { readonly _tag: "ElementTooLarge"; readonly index: number; readonly max: number }
  | { readonly _tag: "RestTooLarge"; readonly max: number }
  | { readonly _tag: "DuplicateStreamedMember" }

/** The body once it has ended. */
export type Result =
  | { readonly _tag: "Failed"; readonly failure: Failure }
  /** No byte at all (after a byte-order mark): `JSON.parse` never saw such a body; the HTTP layer decodes `undefined`. */
  | { readonly _tag: "Empty" }
  /** Valid JSON that is not an object. */
  | { readonly _tag: "NotObject"; readonly value: unknown }
  /** An object: every member but the streamed one, in `JSON.parse`'s result (duplicates resolved as it does). */
  | {
    readonly _tag: "Object"
    readonly rest: Record<string, unknown>
    /** The streamed member: absent, an array (its elements came out of `push`), or another value (kept). */
    readonly streamed:
      | { readonly _tag: "Absent" }
      | { readonly _tag: "Array"; readonly length: number }
      | { readonly _tag: "Other"; readonly value: unknown }
  }

const Mode = {
  Start: 0,
  KeyOrEnd: 1,
  Key: 2,
  Colon: 3,
  Value: 4,
  AfterValue: 5,
  ElementOrEnd: 6,
  Element: 7,
  AfterElement: 8,
  AfterObject: 9,
  Whole: 10,
  Failed: 11
} as const
type Mode = typeof Mode[keyof typeof Mode]

const Capture = { None: 0, Key: 1, Member: 2, Element: 3 } as const
type Capture = typeof Capture[keyof typeof Capture]

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

const DIGIT_0 = 0x30
const DIGIT_9 = 0x39
const LETTER_E = 0x65
const LETTER_CAPITAL_E = 0x45

/** Integer digits from which a number may pass 2^53 - 1 (9,007,199,254,740,991 has 16). */
const SUSPECT_DIGITS = 16

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09
const BOM = [0xef, 0xbb, 0xbf]

const decoder = new TextDecoder()

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    joined.set(part, at)
    at += part.length
  }
  return joined
}

const parse = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/**
 * The parser; `push` each chunk of the body in order, then `end`.
 *
 * @category models
 */
export class StreamingJsonObject {
  private mode: Mode = Mode.Start
  private failure: Failure | undefined
  /** The first bytes while they may still be a byte-order mark; "checked" once they cannot. */
  private bom: Uint8Array | "checked" = new Uint8Array(0)
  private sawByte = false

  // the value being captured: its bytes so far (views into the pushed chunks), how deep it is, string state
  private capture: Capture = Capture.None
  private parts: Array<Uint8Array> = []
  private captured = 0
  private depth = 0
  private inString = false
  private escaped = false
  private scalar = false
  // what the captured value may break (see the module's notes): its deepest level, the run of digits being read, and
  // whether a number looked too large
  private deepest = 0
  private digits = 0
  private numberSuspect = false
  private readonly flagged = new Set<number>()

  private restBytes = 0
  private currentKey = ""
  private readonly members: Array<string> = []
  private streamed: "absent" | "array" | { readonly value: unknown } = "absent"
  private elements = 0

  private readonly streamedKey: string
  private readonly maxElementBytes: number
  private readonly maxRestBytes: number
  private readonly flagDepth: number

  /** `flagDepth`: an element nested deeper than this many levels of its own is flagged (default: never). */
  constructor(
    streamedKey: string,
    maxElementBytes: number,
    maxRestBytes: number,
    flagDepth: number = Number.POSITIVE_INFINITY
  ) {
    this.streamedKey = streamedKey
    this.maxElementBytes = maxElementBytes
    this.maxRestBytes = maxRestBytes
    this.flagDepth = flagDepth
  }

  /**
   * Whether the streamed array's element `index` (0-based, in arrival order) may break a structure rule: nested
   * deeper than `flagDepth` levels of its own, or holding a number that may lie beyond ±(2^53 - 1). A scalar element
   * is always flagged (walking it costs nothing).
   */
  mayBreakRules(index: number): boolean {
    return this.flagged.has(index)
  }

  /** Whether the body was already refused (later bytes are ignored). */
  get failed(): Failure | undefined {
    return this.failure
  }

  /** Elements of the streamed array completed so far. */
  get elementCount(): number {
    return this.elements
  }

  /** Reads one chunk; returns the streamed array's elements it completed, parsed, in order. */
  push(chunk: Uint8Array): Array<unknown> {
    const out: Array<unknown> = []
    if (this.mode === Mode.Failed) return out
    if (this.bom !== "checked") {
      // a byte-order mark counts only at the very start, and may arrive split over chunks
      const held = this.bom.length === 0 ? chunk : concat([this.bom, chunk])
      let matched = 0
      while (matched < 3 && matched < held.length && held[matched] === BOM[matched]) matched++
      if (matched === held.length && matched < 3) {
        this.bom = held
        return out
      }
      this.bom = "checked"
      return this.scan(matched === 3 ? held.subarray(3) : held, out)
    }
    return this.scan(chunk, out)
  }

  private scan(chunk: Uint8Array, out: Array<unknown>): Array<unknown> {
    let i = 0
    const n = chunk.length
    while (i < n && this.mode !== Mode.Failed) {
      this.sawByte = true
      if (this.capture !== Capture.None) {
        i = this.captureFrom(chunk, i, out)
        continue
      }
      const b = chunk[i]!
      switch (this.mode) {
        case Mode.Start:
          if (isSpace(b)) {
            i++
          } else if (b === OPEN_BRACE) {
            this.mode = Mode.KeyOrEnd
            i++
          } else {
            // not an object: kept whole (within the rest's bound) for JSON.parse at the end
            this.mode = Mode.Whole
          }
          break
        case Mode.KeyOrEnd:
        case Mode.Key:
          if (isSpace(b)) i++
          else if (b === QUOTE) this.begin(Capture.Key, b)
          else if (b === CLOSE_BRACE && this.mode === Mode.KeyOrEnd) {
            this.mode = Mode.AfterObject
            i++
          } else return this.fail({ _tag: "Syntax" }, out)
          break
        case Mode.Colon:
          if (isSpace(b)) i++
          else if (b === COLON) {
            this.mode = Mode.Value
            i++
          } else return this.fail({ _tag: "Syntax" }, out)
          break
        case Mode.Value:
          if (isSpace(b)) i++
          else if (this.currentKey === this.streamedKey && b === OPEN_BRACKET) {
            // its key is not one of the other members
            this.members.pop()
            this.streamed = "array"
            this.mode = Mode.ElementOrEnd
            i++
          } else this.begin(Capture.Member, b)
          break
        case Mode.AfterValue:
          if (isSpace(b)) i++
          else if (b === COMMA) {
            this.mode = Mode.Key
            i++
          } else if (b === CLOSE_BRACE) {
            this.mode = Mode.AfterObject
            i++
          } else return this.fail({ _tag: "Syntax" }, out)
          break
        case Mode.ElementOrEnd:
        case Mode.Element:
          if (isSpace(b)) i++
          else if (b === CLOSE_BRACKET && this.mode === Mode.ElementOrEnd) {
            this.mode = Mode.AfterValue
            i++
          } else this.begin(Capture.Element, b)
          break
        case Mode.AfterElement:
          if (isSpace(b)) i++
          else if (b === COMMA) {
            this.mode = Mode.Element
            i++
          } else if (b === CLOSE_BRACKET) {
            this.mode = Mode.AfterValue
            i++
          } else return this.fail({ _tag: "Syntax" }, out)
          break
        case Mode.AfterObject:
          if (isSpace(b)) i++
          else return this.fail({ _tag: "Syntax" }, out)
          break
        case Mode.Whole: {
          this.restBytes += n - i
          if (this.restBytes > this.maxRestBytes) {
            return this.fail({ _tag: "RestTooLarge", max: this.maxRestBytes }, out)
          }
          this.parts.push(chunk.subarray(i))
          i = n
          break
        }
      }
    }
    return out
  }

  /** The body has ended: what it was. */
  end(): Result {
    if (this.bom !== "checked") {
      // fewer than three bytes, all a prefix of the mark: not a mark, so they are the body
      const held = this.bom
      this.bom = "checked"
      this.scan(held, [])
    }
    if (this.failure !== undefined) return { _tag: "Failed", failure: this.failure }
    if (!this.sawByte) return { _tag: "Empty" }
    if (this.mode === Mode.Whole) {
      const parsed = parse(this.text())
      return parsed.ok ? { _tag: "NotObject", value: parsed.value } : { _tag: "Failed", failure: { _tag: "Syntax" } }
    }
    if (this.mode === Mode.Start) {
      // only whitespace: JSON.parse fails on it
      return { _tag: "Failed", failure: { _tag: "Syntax" } }
    }
    if (this.mode !== Mode.AfterObject) return { _tag: "Failed", failure: { _tag: "Syntax" } }
    const rest = JSON.parse(`{${this.members.join(",")}}`) as Record<string, unknown>
    return {
      _tag: "Object",
      rest,
      streamed: this.streamed === "absent"
        ? { _tag: "Absent" }
        : this.streamed === "array"
        ? { _tag: "Array", length: this.elements }
        : { _tag: "Other", value: this.streamed.value }
    }
  }

  private fail(failure: Failure, out: Array<unknown>): Array<unknown> {
    this.failure = failure
    this.mode = Mode.Failed
    this.parts = []
    return out
  }

  private begin(capture: Capture, first: number) {
    this.capture = capture
    this.parts = []
    this.captured = 0
    this.depth = 0
    this.inString = false
    this.escaped = false
    this.scalar = first !== QUOTE && first !== OPEN_BRACE && first !== OPEN_BRACKET
    this.deepest = 0
    this.digits = 0
    this.numberSuspect = false
  }

  private text(): string {
    const parts = this.parts
    this.parts = []
    return decoder.decode(parts.length === 1 ? parts[0] : concat(parts))
  }

  /** Scans the value being captured from `start`; returns where it stopped (the chunk's end, or past the value). */
  private captureFrom(chunk: Uint8Array, start: number, out: Array<unknown>): number {
    const n = chunk.length
    let i = start
    let done = false
    if (this.scalar) {
      // a number or a literal: ends before the next delimiter, which belongs to the enclosing structure
      while (i < n) {
        const b = chunk[i]!
        if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || isSpace(b)) {
          done = true
          break
        }
        i++
      }
    } else {
      // the scan's state in locals (written back below): this loop runs over every byte of every task
      let depth = this.depth
      let inString = this.inString
      let escaped = this.escaped
      let digits = this.digits
      let deepest = this.deepest
      let numberSuspect = this.numberSuspect
      while (i < n) {
        const b = chunk[i]!
        i++
        if (inString) {
          if (escaped) escaped = false
          else if (b === BACKSLASH) escaped = true
          else if (b === QUOTE) {
            inString = false
            if (depth === 0) {
              done = true
              break
            }
          }
          continue
        }
        if (b >= DIGIT_0 && b <= DIGIT_9) {
          if (++digits >= SUSPECT_DIGITS) numberSuspect = true
          continue
        }
        if (digits > 0) {
          // the end of a run of digits: an exponent makes its number suspect; a fraction's digits count anew
          if (b === LETTER_E || b === LETTER_CAPITAL_E) numberSuspect = true
          digits = 0
        }
        if (b === QUOTE) inString = true
        else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
          if (++depth > deepest) deepest = depth
        } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
          depth--
          if (depth <= 0) {
            done = true
            break
          }
        }
      }
      this.depth = depth
      this.inString = inString
      this.escaped = escaped
      this.digits = digits
      this.deepest = deepest
      this.numberSuspect = numberSuspect
    }
    const taken = i - start
    this.captured += taken
    if (this.capture === Capture.Element) {
      if (this.captured > this.maxElementBytes) {
        this.fail({ _tag: "ElementTooLarge", index: this.elements, max: this.maxElementBytes }, out)
        return n
      }
    } else {
      this.restBytes += taken
      if (this.restBytes > this.maxRestBytes) {
        this.fail({ _tag: "RestTooLarge", max: this.maxRestBytes }, out)
        return n
      }
    }
    if (taken > 0) this.parts.push(chunk.subarray(start, i))
    if (done) this.complete(out)
    return i
  }

  private complete(out: Array<unknown>) {
    const capture = this.capture
    this.capture = Capture.None
    const text = this.text()
    const parsed = parse(text)
    if (!parsed.ok) {
      this.fail({ _tag: "Syntax" }, out)
      return
    }
    switch (capture) {
      case Capture.Key: {
        const key = parsed.value as string
        if (key === this.streamedKey && this.streamed !== "absent") {
          this.fail({ _tag: "DuplicateStreamedMember" }, out)
          return
        }
        this.currentKey = key
        this.members.push(text)
        this.mode = Mode.Colon
        return
      }
      case Capture.Member:
        if (this.currentKey === this.streamedKey) {
          this.streamed = { value: parsed.value }
          this.members.pop()
        } else {
          this.members[this.members.length - 1] += ":" + text
        }
        this.mode = Mode.AfterValue
        return
      case Capture.Element:
        if (this.scalar || this.numberSuspect || this.deepest > this.flagDepth) this.flagged.add(this.elements)
        this.elements++
        out.push(parsed.value)
        this.mode = Mode.AfterElement
        return
    }
  }
}
