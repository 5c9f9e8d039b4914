/** Pure helpers for what the pages print: times, durations, progress. No DOM, so the unit tests run them in Node. */
import type { BatchCall, TaskState } from "./api/Types.ts"

/** An epoch-ms instant as the user's local date and time, with the UTC instant in the tooltip text. */
export const dateTime = (ms: number | null | undefined): string =>
  ms === null || ms === undefined
    ? "—"
    : new Date(ms).toLocaleString(undefined, {
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit"
    })

export const isoTime = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? "" : new Date(ms).toISOString()

/** "in 3 h 12 min", "5 min ago", "now": the distance from `now` to `ms`, to the minute (seconds under a minute). */
export const relative = (ms: number, now: number): string => {
  const delta = ms - now
  const abs = Math.abs(delta)
  if (abs < 1000) return "now"
  const text = duration(abs)
  return delta > 0 ? `in ${text}` : `${text} ago`
}

/** A length of time: "42 s", "7 min", "3 h 12 min", "2 d 4 h". */
export const duration = (ms: number): string => {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`
  const days = Math.floor(hours / 24)
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`
}

/** Tasks that will not be dialled again: every state but pending, dialling and unknown. */
export const finishedTasks = (batch: Pick<BatchCall, "tasks">): number =>
  batch.tasks.completed + batch.tasks.failed + batch.tasks.skipped + batch.tasks.cancelled

/** Whole percent of a batch's tasks finished (0 for an empty batch). */
export const percentDone = (batch: Pick<BatchCall, "tasks" | "total_task_count">): number =>
  batch.total_task_count === 0 ? 100 : Math.floor((finishedTasks(batch) * 100) / batch.total_task_count)

export const count = (n: number): string => n.toLocaleString("en-US")

/** One sample of a batch's task counts, for the chart of counts over time. */
export interface Sample {
  readonly t: number
  readonly counts: Readonly<Record<TaskState, number>>
}

/** At most this many samples are kept per batch (a sample every 2 s: over an hour and a half). */
export const MAX_SAMPLES = 3000

/**
 * Adds a sample to a batch's series: appended when the time moved on, the oldest dropped past {@link MAX_SAMPLES};
 * a sample equal to the last two (nothing changed) replaces the last one, so a batch that waits hours for its
 * window costs two points, not thousands.
 */
export const addSample = (series: ReadonlyArray<Sample>, sample: Sample): ReadonlyArray<Sample> => {
  const last = series[series.length - 1]
  if (last !== undefined && sample.t <= last.t) return series
  const before = series[series.length - 2]
  const same = (a: Sample | undefined) =>
    a !== undefined &&
    Object.keys(sample.counts).every((k) => a.counts[k as TaskState] === sample.counts[k as TaskState])
  const next = same(last) && same(before) ? [...series.slice(0, -1), sample] : [...series, sample]
  return next.length > MAX_SAMPLES ? next.slice(next.length - MAX_SAMPLES) : next
}
