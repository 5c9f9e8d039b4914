/** Small pieces every page uses: error notes, progress bars, the definition lists of a record's fields. */
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"
import type { BatchCall } from "../api/Types.ts"
import { count, finishedTasks, percentDone } from "../Format.ts"

/** An error of the API, with its message as the API wrote it (decision 0800). */
export const ErrorNote = (props: { readonly error: string | undefined }) =>
  props.error === undefined ? null : (
    <p class="error" role="alert">
      <strong>Error:</strong> {props.error}
    </p>
  )

export const BatchProgressBar = (props: { readonly batch: BatchCall }) => {
  const done = finishedTasks(props.batch)
  const percent = percentDone(props.batch)
  return (
    <div class="progress">
      <div
        class="progress-track"
        role="progressbar"
        aria-label={`${props.batch.name || props.batch.batch_call_id}: tasks finished`}
        aria-valuemin={0}
        aria-valuemax={props.batch.total_task_count}
        aria-valuenow={done}
        aria-valuetext={`${count(done)} of ${count(props.batch.total_task_count)} tasks finished (${percent}%)`}
      >
        <div class="progress-fill" style={{ width: `${percent}%` }} />
      </div>
      <span class="progress-text">
        {count(done)} / {count(props.batch.total_task_count)}
      </span>
    </div>
  )
}

export const Fields = (props: { readonly rows: ReadonlyArray<readonly [string, ComponentChildren]> }) => (
  <dl class="fields">
    {props.rows.map(([name, value]) => (
      <div key={name}>
        <dt>{name}</dt>
        <dd>{value}</dd>
      </div>
    ))}
  </dl>
)

export const Json = (props: { readonly value: unknown; readonly label: string }) => (
  <pre class="json" tabIndex={0} aria-label={props.label}>{JSON.stringify(props.value, null, 2)}</pre>
)

/** The current time, advancing every `everyMs`: relative times ("in 3 min") stay true while a page is open. */
export const useNow = (everyMs = 1000): number => {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}
