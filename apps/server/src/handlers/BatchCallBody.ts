/**
 * The body of `POST /create-batch-call` read as it arrives (decision 0303), for `BatchCallsRepo.createFrom`:
 * the tasks come out decoded, a chunk of up to 2,000 tasks or ~1 MiB of JSON at a time, so no more than one
 * chunk of the body is held however large the batch (the whole body parsed at once cost 6-16 times its size).
 *
 * Every answer is the one decoding the whole body gave: the same schemas, the same first error by the same
 * precedence (invalid JSON anywhere; then the request's fields in schema order, `from_number` before `tasks`
 * before the rest; the first invalid task by index), the same messages. What streaming adds (decision 0303):
 * a task of more than 1 MiB of JSON, or more than 1 MiB outside the `tasks` array, is a 400 naming the bound;
 * the body's own rules (BodyText: text, nesting, numbers) come before the schema's, task by task as they arrive;
 * `tasks` given twice is a 400 (`JSON.parse` kept the last); the body's size is checked against the endpoint's
 * limit as it arrives, and a body sent without a length takes its bytes from the process's budget as they come.
 */
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { BatchCallTask } from "@svc/domain/models/BatchCallTask.ts"
import { E164 } from "@svc/domain/models/E164.ts"
import { maxJsonDepth } from "@svc/domain/models/JsonLimits.ts"
import { requestParseOptions } from "@svc/domain/models/RequestDecoding.ts"
import { CHUNK_TASKS, type CreateBatchCallHead, type CreateBatchCallSource } from "@svc/store/batches/BatchCallsRepo.ts"
import { Data, Effect, Result, Schema, SchemaIssue, Stream } from "effect"
import type { BodyBudget } from "../middleware/BodyBudget.ts"
import {
  type BodyLimit,
  MISSING_CONTENT_TYPE,
  RequestBodyBudgetExhausted,
  RequestBodyTooLarge
} from "../middleware/BodyLimits.ts"
import * as BodyText from "../middleware/BodyText.ts"
import { StreamingJsonObject } from "./StreamingJsonObject.ts"

const MiB = 1024 * 1024

/** The most JSON one task may take (a task with a full agent override is ~2 KB). */
export const MAX_TASK_BYTES = MiB

/** The most JSON the request may hold outside its `tasks` array (a name, a number, a call window). */
export const MAX_REST_BYTES = MiB

/** Body bytes after which the tasks read so far go to the database, even if fewer than `CHUNK_TASKS`. */
const CHUNK_BYTES = MiB

/**
 * The body is not a valid request: the error decoding the whole body would have given.
 *
 * @category errors
 */
export class InvalidBody extends Data.TaggedError("InvalidBody")<{ readonly error: Schema.SchemaError }> {}

/**
 * A part of the body is over its own bound (a task, or what is outside the tasks), or `tasks` came twice.
 *
 * @category errors
 */
export class BodyRefused extends Data.TaggedError("BodyRefused")<{ readonly message: string }> {}

/**
 * The body could not be read (the client went away, or sent a broken chunked encoding).
 *
 * @category errors
 */
export class BodyReadFailed extends Data.TaggedError("BodyReadFailed")<{ readonly cause: unknown }> {}

/** @category errors */
export type BodyError = InvalidBody | BodyRefused | BodyReadFailed | RequestBodyTooLarge | RequestBodyBudgetExhausted

/** What bounds the read: the endpoint's limit, and the budget when no length was declared (BodyLimits.ts). */
export interface Allowance {
  readonly limit: BodyLimit | undefined
  /** When set, the body's bytes are taken from it as they arrive (and given back by the caller: `taken`). */
  readonly budget: BodyBudget["Service"] | undefined
  /**
   * The request sent no Content-Type: any byte of body is refused (decision 0106; BodyLimits refuses such a body from
   * its headers, which a server adapter other than Node's may not have).
   */
  readonly undeclaredType?: boolean
}

// The request decoded as the HTTP layer decodes a JSON payload (HttpApiBuilder: the payload schemas as a union).
// Unknown fields are an error at every level, as for every endpoint (decision 0105, RequestDecoding.ts).
const decodeRequest = Schema.decodeUnknownResult(Schema.Union([CreateBatchCallRequest]), requestParseOptions)
const decodeTask = Schema.decodeUnknownResult(BatchCallTask, requestParseOptions)
const decodeFromNumber = Schema.decodeUnknownResult(E164, requestParseOptions)

const REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(CreateBatchCallRequest.fields))

/** A valid task standing in for the streamed ones when the rest of the request is decoded. */
const PLACEHOLDER_TASK = { to_number: "+14155550100" }

const invalidJson = () =>
  new InvalidBody({
    error: new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" }))
  })

/**
 * A body as a source of tasks and fields for `BatchCallsRepo.createFrom`; `taken()` is what was taken from the
 * budget so far, for the caller to give back once the request is done.
 *
 * @category constructors
 */
export const read = (
  body: Stream.Stream<Uint8Array, unknown>,
  allowance: Allowance
): { readonly source: CreateBatchCallSource<BodyError>; readonly taken: () => number } => {
  // a task sits two levels down in the body (its object, the tasks array): it may nest maxJsonDepth - 2 of its own
  const parser = new StreamingJsonObject("tasks", MAX_TASK_BYTES, MAX_REST_BYTES, maxJsonDepth - 2)
  const utf8 = new TextDecoder("utf-8", { fatal: true })
  let suspect = false
  // the last bytes of the previous chunk, so an escape cut by a chunk boundary is seen whole
  let tail = Buffer.alloc(0)
  const scan = (bytes: Buffer): boolean => {
    for (let at = bytes.indexOf("\\u"); at !== -1; at = bytes.indexOf("\\u", at + 2)) {
      // no backslash parity here (a run of backslashes may be cut by the boundary): a false alarm costs a walk
      if (/^(0000|d[89a-f])/i.test(bytes.toString("latin1", at + 2, at + 6))) return true
    }
    return false
  }
  const suspectEscape = (chunk: Uint8Array): boolean => {
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const seam = Buffer.concat([tail, view.subarray(0, 5)])
    tail = Buffer.from(view.subarray(Math.max(0, view.length - 5)))
    return scan(seam) || scan(view)
  }
  /** Whether the bytes so far are valid UTF-8 (`undefined`: the body ended; a sequence cut short is invalid). */
  const validUtf8 = (chunk: Uint8Array | undefined): boolean => {
    try {
      if (chunk === undefined) utf8.decode()
      else utf8.decode(chunk, { stream: true })
      return true
    } catch {
      return false
    }
  }
  let received = 0
  let taken = 0
  let sinceChunk = 0
  let pending: Array<BatchCallTask> = []
  let decoded = 0
  let taskError: Schema.SchemaError | undefined
  let head: CreateBatchCallHead | undefined

  const refuse = (failure: NonNullable<StreamingJsonObject["failed"]>): BodyError => {
    switch (failure._tag) {
      case "Syntax":
        return invalidJson()
      case "ElementTooLarge":
        return new BodyRefused({
          message: `tasks[${failure.index}] is larger than ${failure.max / MiB} MiB of JSON, the most one task may take`
        })
      case "RestTooLarge":
        return new BodyRefused({
          message: `the request holds more than ${
            failure.max / MiB
          } MiB of JSON outside its tasks, the most create-batch-call accepts there`
        })
      case "DuplicateStreamedMember":
        return new BodyRefused({ message: "tasks is given more than once; send one tasks array" })
    }
  }

  const take = (): ReadonlyArray<ReadonlyArray<BatchCallTask>> => {
    sinceChunk = 0
    if (pending.length === 0) return []
    const chunk = pending
    pending = []
    return [chunk]
  }

  const push = (chunk: Uint8Array) =>
    Effect.gen(function*() {
      received += chunk.length
      if (allowance.undeclaredType === true && chunk.length > 0) {
        return yield* new BodyRefused({ message: MISSING_CONTENT_TYPE })
      }
      if (allowance.limit !== undefined && received > allowance.limit.bytes) {
        return yield* new RequestBodyTooLarge({ limit: allowance.limit })
      }
      if (allowance.budget !== undefined) {
        if (!(yield* allowance.budget.tryTake(chunk.length))) return yield* new RequestBodyBudgetExhausted()
        taken += chunk.length
      }
      // BodyText's rule, as for every other endpoint (decision 0011): the bytes valid UTF-8 (checked across chunk
      // boundaries by a streaming decoder), no string of a task with a NUL or an unpaired surrogate
      if (!validUtf8(chunk)) return yield* new BodyRefused({ message: BodyText.NOT_UTF8 })
      // a NUL or a lone surrogate can only come from an escape (raw control characters are not JSON, and the bytes
      // are valid UTF-8): tasks are walked only once one may have been sent, as BodyText does for whole bodies
      if (!suspect) suspect = suspectEscape(chunk)
      const elements = parser.push(chunk)
      if (parser.failed !== undefined) return yield* refuse(parser.failed)
      for (const element of elements) {
        const index = decoded++
        // the body's rules before its schema, as BodyText checks a whole body before it is decoded; a task is walked
        // only when its bytes may break one (the parser's flags; an escape seen for the text rule)
        const bodyProblem = suspect || parser.mayBreakRules(index)
          ? BodyText.checkValue(element, ["tasks", index], { text: suspect, levelsAbove: 2 })
          : undefined
        if (bodyProblem !== undefined) return yield* new BodyRefused({ message: bodyProblem })
        // after the first invalid task only the JSON is still checked: that task's error is the one reported
        if (taskError !== undefined) continue
        const task = decodeTask(element)
        if (Result.isFailure(task)) {
          taskError = new Schema.SchemaError(new SchemaIssue.Pointer(["tasks", index], task.failure.issue))
          pending = []
          continue
        }
        pending.push(task.success)
      }
      sinceChunk += chunk.length
      return taskError === undefined && (pending.length >= CHUNK_TASKS || sinceChunk >= CHUNK_BYTES) ? take() : []
    })

  const end = Effect.gen(function*() {
    if (!validUtf8(undefined)) return yield* new BodyRefused({ message: BodyText.NOT_UTF8 })
    const result = parser.end()
    switch (result._tag) {
      case "Failed":
        return yield* refuse(result.failure)
      case "Empty":
      case "NotObject": {
        if (result._tag === "NotObject") {
          const bodyProblem = BodyText.checkValue(result.value, [], { text: true, levelsAbove: 0 })
          if (bodyProblem !== undefined) return yield* new BodyRefused({ message: bodyProblem })
        }
        const request = decodeRequest(result._tag === "Empty" ? undefined : result.value)
        // neither decodes; if one did, it would have no tasks
        return yield* Result.isFailure(request) ? new InvalidBody({ error: request.failure }) : invalidJson()
      }
      case "Object": {
        const { rest, streamed } = result
        const bodyProblem = BodyText.checkValue(
          streamed._tag === "Other" ? { ...rest, tasks: streamed.value } : rest,
          [],
          { text: true, levelsAbove: 0 }
        )
        if (bodyProblem !== undefined) return yield* new BodyRefused({ message: bodyProblem })
        const candidate: Record<string, unknown> = { ...rest }
        if (streamed._tag === "Other") candidate["tasks"] = streamed.value
        if (streamed._tag === "Array") candidate["tasks"] = streamed.length === 0 ? [] : [PLACEHOLDER_TASK]
        const request = decodeRequest(candidate)
        if (taskError !== undefined) {
          // a field the request does not know is reported before any field's own error (the decoder checks a
          // level's keys first), and from_number comes before tasks in the request's schema: either came first
          if (Object.keys(rest).some((key) => !REQUEST_FIELDS.has(key)) && Result.isFailure(request)) {
            return yield* new InvalidBody({ error: request.failure })
          }
          const fromNumberFails = !Object.hasOwn(rest, "from_number") ||
            Result.isFailure(decodeFromNumber(rest["from_number"]))
          return yield* new InvalidBody({
            error: fromNumberFails && Result.isFailure(request) ? request.failure : taskError
          })
        }
        if (Result.isFailure(request)) return yield* new InvalidBody({ error: request.failure })
        const { tasks: _tasks, ...fields } = request.success
        head = fields
        return take()
      }
    }
  })

  const tasks = body.pipe(
    Stream.mapError((cause) => new BodyReadFailed({ cause })),
    Stream.mapEffect(push),
    Stream.concat(Stream.fromEffect(end)),
    Stream.flattenIterable
  )
  return {
    source: {
      tasks,
      head: Effect.suspend(() =>
        head === undefined
          ? Effect.die(new Error("the request's fields were read before its tasks ended"))
          : Effect.succeed(head)
      )
    },
    taken: () => taken
  }
}
