/**
 * One batch call: its progress (GET /get-batch-call, every 2 s), the task counts over time, what legal hours hold back
 * and until when (`legal_hours`, docs/api.md "Legal hours at the called party"), the estimated completion, the actions
 * (cancel, pause, resume, retry: POST /<action>-batch-call) and its tasks (POST /list-batch-call-tasks).
 *
 * The counts over time are sampled by this page while it is open and kept in the tab's session storage: the API
 * answers counts now, not their history (docs/decisions/0800).
 */
import { useEffect, useState } from "preact/hooks"
import { ApiError } from "../api/Client.ts"
import { type BatchCall, type BatchTask, type Page, type RetryAnswer, TASK_STATES, type ZoneSet } from "../api/Types.ts"
import { addSample, count, dateTime, isoTime, relative, type Sample } from "../Format.ts"
import { href } from "../Router.ts"
import { STATE_COLOURS, TaskChart } from "../ui/Chart.tsx"
import { useClient } from "../ui/ClientContext.ts"
import { BatchProgressBar, ErrorNote, Fields, useNow } from "../ui/Common.tsx"
import { usePaged } from "../ui/Paged.ts"
import { type Column, VirtualTable } from "../ui/VirtualTable.tsx"
import { windowText } from "./Batches.tsx"

const POLL_MS = 2000

const seriesKey = (id: string) => `svc.console.series.${id}`

const loadSeries = (id: string): ReadonlyArray<Sample> => {
  try {
    const stored: unknown = JSON.parse(sessionStorage.getItem(seriesKey(id)) ?? "[]")
    return Array.isArray(stored) ? (stored as ReadonlyArray<Sample>) : []
  } catch {
    return []
  }
}

const Time = (props: { readonly at: number | null; readonly now: number }) =>
  props.at === null ? <span>—</span> : (
    <time dateTime={isoTime(props.at)} title={isoTime(props.at)}>
      {dateTime(props.at)} ({relative(props.at, props.now)})
    </time>
  )

type Action = "pause" | "resume" | "cancel" | "retry"

const Actions = (props: { readonly batch: BatchCall; readonly onDone: (batch: BatchCall | undefined) => void }) => {
  const client = useClient()
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const status = props.batch.status
  const run = async (action: Action) => {
    setBusy(true)
    setError(undefined)
    setMessage(undefined)
    try {
      const path = `/${action}-batch-call/${encodeURIComponent(props.batch.batch_call_id)}`
      if (action === "retry") {
        const answer = await client.post<RetryAnswer>(path)
        setMessage(`Retry requested: ${count(answer.requeued_task_count)} tasks re-queued.`)
        props.onDone(undefined)
      } else {
        const batch = await client.post<BatchCall>(path)
        setMessage(
          `${
            action === "cancel" ? "Cancelled" : action === "pause" ? "Paused" : "Resumed"
          }: the batch is now ${batch.status}.`
        )
        props.onDone(batch)
      }
    } catch (e) {
      setError(e instanceof ApiError || e instanceof Error ? e.message : String(e))
    } finally {
      setBusy(false)
      setConfirming(false)
    }
  }
  const open = status === "scheduled" || status === "in_progress" || status === "paused"
  return (
    <section aria-labelledby="actions-title" class="panel">
      <h2 id="actions-title">Actions</h2>
      <div class="actions">
        {status === "scheduled" || status === "in_progress"
          ? <button type="button" disabled={busy} onClick={() => run("pause")}>Pause</button>
          : null}
        {status === "paused"
          ? <button type="button" disabled={busy} onClick={() => run("resume")}>Resume</button>
          : null}
        {status !== "cancelled"
          ? (
            <button type="button" class="secondary" disabled={busy} onClick={() => run("retry")}>
              Retry finished tasks
            </button>
          )
          : null}
        {open && !confirming
          ? (
            <button type="button" class="danger" disabled={busy} onClick={() => setConfirming(true)}>
              Cancel batch…
            </button>
          )
          : null}
      </div>
      {confirming
        ? (
          <div class="confirm" role="group" aria-labelledby="confirm-text">
            <p id="confirm-text">
              Cancel this batch? Its {count(props.batch.tasks.pending)}{" "}
              pending tasks will never be dialled; calls in progress finish.
            </p>
            <button type="button" class="danger" disabled={busy} onClick={() => run("cancel")}>
              Yes, cancel the batch
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>Keep it</button>
          </div>
        )
        : null}
      <p role="status" class="note">{message ?? ""}</p>
      <ErrorNote error={error} />
    </section>
  )
}

const Timeline = (props: { readonly sets: ReadonlyArray<ZoneSet>; readonly now: number }) => {
  const upcoming = props.sets.filter((s) => s.next_opening_timestamp !== null && s.blocked_by !== null)
  if (upcoming.length === 0) return null
  const last = Math.max(...upcoming.map((s) => s.next_opening_timestamp ?? 0))
  const span = Math.max(60_000, last - props.now)
  return (
    <ol class="timeline" aria-label="Next openings of the held zone sets">
      {[...upcoming].sort((a, b) => (a.next_opening_timestamp ?? 0) - (b.next_opening_timestamp ?? 0)).map((s) => {
        const at = s.next_opening_timestamp ?? 0
        const left = Math.min(100, Math.max(0, ((at - props.now) / span) * 100))
        return (
          <li key={s.zones.join(",") + s.rules.join(",")}>
            <span class="timeline-label">{s.zones.join(", ")}</span>
            <span class="timeline-track" aria-hidden="true">
              <span class="timeline-mark" style={{ left: `${left}%` }} />
            </span>
            <span class="timeline-when">{relative(at, props.now)}</span>
          </li>
        )
      })}
    </ol>
  )
}

const LegalHoursPanel = (props: { readonly batch: BatchCall; readonly now: number }) => {
  const legal = props.batch.legal_hours
  if (legal === undefined) return null
  return (
    <section aria-labelledby="legal-title" class="panel">
      <h2 id="legal-title">Legal hours</h2>
      <Fields
        rows={[
          ["Dialable now", count(legal.dialable_now_tasks)],
          ["Unconstrained (no legal-hours rule)", count(legal.unconstrained_tasks)],
          ["No opening within 14 days", count(legal.never_within_horizon_tasks)],
          ["Calling policy version", legal.policy_version === 0 ? "default (0)" : String(legal.policy_version)]
        ]}
      />
      {legal.held_back.length === 0 ? <p>No pending task is held back.</p> : (
        <table class="plain">
          <caption>Pending tasks held back, by the rule holding them</caption>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Tasks</th>
            </tr>
          </thead>
          <tbody>
            {legal.held_back.map((h) => (
              <tr key={h.rule}>
                <td>{h.rule}</td>
                <td>{count(h.tasks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {legal.zone_sets.length === 0 ? null : (
        <div class="scroll-x" tabIndex={0} role="region" aria-label="Zone sets">
          <table class="plain zone-sets">
            <caption>Zone sets with pending tasks</caption>
            <thead>
              <tr>
                <th scope="col">Zones</th>
                <th scope="col">Rules</th>
                <th scope="col">Pending</th>
                <th scope="col">Held by</th>
                <th scope="col">Next opening</th>
              </tr>
            </thead>
            <tbody>
              {legal.zone_sets.map((s) => (
                <tr key={s.zones.join(",") + s.rules.join(",")}>
                  <td>{s.zones.join(", ")}</td>
                  <td>{s.rules.join(", ")}</td>
                  <td>{count(s.pending_tasks)}</td>
                  <td>
                    {s.blocked_by ?? "— (dialable)"}
                    {s.state_reason === null ? null : <div class="reason">{s.state_reason}</div>}
                  </td>
                  <td>
                    {s.next_opening_timestamp === null
                      ? "no opening within 14 days"
                      : <Time at={s.next_opening_timestamp} now={props.now} />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Timeline sets={legal.zone_sets} now={props.now} />
    </section>
  )
}

const Tasks = (props: { readonly id: string; readonly now: number }) => {
  const client = useClient()
  const [state, setState] = useState("")
  const list = usePaged(
    (key) =>
      client.post<Page<BatchTask>>(`/list-batch-call-tasks/${encodeURIComponent(props.id)}`, {
        // a first page of what a screen shows, then larger pages as the user scrolls
        limit: key === undefined ? 50 : 500,
        ...(key === undefined ? {} : { pagination_key: key }),
        ...(state === "" ? {} : { filter_criteria: { state: { type: "enum", op: "in", value: [state] } } })
      }),
    [props.id, state]
  )
  const columns: ReadonlyArray<Column<BatchTask>> = [
    { header: "Task", width: "minmax(4rem, 0.6fr)", render: (t) => t.task_id },
    { header: "Number", width: "minmax(8rem, 1fr)", render: (t) => t.to_number },
    { header: "State", width: "minmax(6rem, 0.8fr)", render: (t) => <span class={`badge ${t.state}`}>{t.state}</span> },
    {
      header: "Reason",
      width: "minmax(10rem, 3fr)",
      render: (t) => <span title={t.state_reason ?? ""}>{t.state_reason ?? ""}</span>
    },
    { header: "Calls", width: "minmax(3rem, 0.4fr)", optional: true, render: (t) => String(t.attempts) },
    {
      header: "Last call",
      width: "minmax(8rem, 1.2fr)",
      optional: true,
      render: (t) =>
        t.last_call_id === null ? "" : <a href={href.call(t.last_call_id)}>{t.last_outcome ?? "in progress"}</a>
    },
    {
      header: "Next attempt",
      width: "minmax(7rem, 1fr)",
      optional: true,
      render: (t) => t.next_attempt_timestamp === null ? "" : relative(t.next_attempt_timestamp, props.now)
    }
  ]
  return (
    <section aria-labelledby="tasks-title">
      <h2 id="tasks-title">Tasks</h2>
      <div class="filters">
        <label for="task-state">State</label>
        <select id="task-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
          {["", ...TASK_STATES].map((s) => <option value={s} key={s}>{s === "" ? "any" : s}</option>)}
        </select>
        <a href={href.calls(props.id)}>This batch's calls</a>
      </div>
      <ErrorNote error={list.error} />
      <VirtualTable
        label="Tasks"
        columns={columns}
        rows={list.rows}
        rowKey={(t) => t.task_id}
        hasMore={list.hasMore}
        loading={list.loading}
        loadMore={list.loadMore}
      />
    </section>
  )
}

export const BatchPage = (props: { readonly id: string }) => {
  const client = useClient()
  const now = useNow()
  const [batch, setBatch] = useState<BatchCall | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [series, setSeries] = useState<ReadonlyArray<Sample>>(() => loadSeries(props.id))
  const [tick, setTick] = useState(0)

  const accept = (next: BatchCall) => {
    setBatch(next)
    setSeries((before) => {
      const after = addSample(before, { t: Date.now(), counts: next.tasks })
      try {
        sessionStorage.setItem(seriesKey(props.id), JSON.stringify(after))
      } catch {
        // storage full: the chart keeps what it has in memory
      }
      return after
    })
  }

  useEffect(() => {
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const controller = new AbortController()
    const poll = async () => {
      try {
        const next = await client.get<BatchCall>(`/get-batch-call/${encodeURIComponent(props.id)}`, controller.signal)
        if (stopped) return
        accept(next)
        setError(undefined)
        // a finished batch changes no more: stop asking
        if (next.status === "completed" || next.status === "cancelled") return
      } catch (e) {
        if (stopped) return
        setError(e instanceof Error ? e.message : String(e))
        if (e instanceof ApiError && (e.status === 404 || e.status === 401)) return
      }
      timer = setTimeout(poll, POLL_MS)
    }
    void poll()
    return () => {
      stopped = true
      controller.abort()
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [props.id, tick])

  const summary = batch === undefined ?
    "" :
    `Task counts over time: ${
      TASK_STATES.map((s) => `${s} ${count(batch.tasks[s])}`).join(", ")
    } (${series.length} samples since this page first opened in this tab)`
  const details = batch === undefined
    ? (
      <>
        <h1 id="batch-title">Batch {props.id}</h1>
        {error === undefined ? <p>Loading…</p> : <ErrorNote error={error} />}
      </>
    )
    : (
      <>
        <p class="crumbs">
          <a href={href.batches()}>Batch calls</a> /
        </p>
        <h1 id="batch-title">{batch.name === "" ? batch.batch_call_id : batch.name}</h1>
        <ErrorNote error={error} />
        <BatchProgressBar batch={batch} />
        <Fields
          rows={[
            ["Status", <span class={`badge ${batch.status}`} data-testid="batch-status">{batch.status}</span>],
            ["Id", batch.batch_call_id],
            ["From", batch.from_number],
            ["Calls placed", count(batch.calls_placed)],
            ["Calls in flight", count(batch.calls_in_flight)],
            ["Max concurrency", batch.max_concurrency === undefined ? "—" : String(batch.max_concurrency)],
            ["Created", <Time at={batch.created_timestamp} now={now} />],
            ["Trigger", <Time at={batch.scheduled_timestamp} now={now} />],
            ["Window", windowText(batch, now)],
            ["Estimated completion", <Time at={batch.estimated_completion_timestamp} now={now} />],
            ...(batch.completed_timestamp === null
              ? []
              : [["Completed", <Time at={batch.completed_timestamp} now={now} />] as const]),
            ...(batch.cancelled_timestamp === null
              ? []
              : [["Cancelled", <Time at={batch.cancelled_timestamp} now={now} />] as const])
          ]}
        />
        <Actions
          batch={batch}
          onDone={(next) => (next === undefined ? setTick((n) => n + 1) : (accept(next), setTick((n) => n + 1)))}
        />
        <section aria-labelledby="counts-title" class="panel">
          <h2 id="counts-title">Tasks by state</h2>
          <div class="scroll-x" tabIndex={0} role="region" aria-label="Tasks per state">
            <table class="plain counts">
              <caption class="visually-hidden">Tasks per state now</caption>
              <thead>
                <tr>
                  {TASK_STATES.map((s) => <th scope="col" key={s}>{s}</th>)}
                </tr>
              </thead>
              <tbody>
                <tr>
                  {TASK_STATES.map((s) => (
                    <td key={s} data-state={s}>
                      <span class="swatch" style={{ background: STATE_COLOURS[s] }} aria-hidden="true" />
                      {count(batch.tasks[s])}
                    </td>
                  ))}
                </tr>
              </tbody>
            </table>
          </div>
          <TaskChart samples={series} summary={summary} />
        </section>
        <LegalHoursPanel batch={batch} now={now} />
      </>
    )
  // the tasks are asked for at once, beside the progress, and stay mounted when it arrives
  return (
    <section aria-labelledby="batch-title">
      {details}
      <Tasks id={props.id} now={now} />
    </section>
  )
}
