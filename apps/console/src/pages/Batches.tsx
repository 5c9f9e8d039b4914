/** The org's batch calls (POST /list-batch-calls): status, progress, created, window; newest first. */
import { useState } from "preact/hooks"
import type { BatchCall, Page } from "../api/Types.ts"
import { dateTime, isoTime, relative } from "../Format.ts"
import { href } from "../Router.ts"
import { useClient } from "../ui/ClientContext.ts"
import { BatchProgressBar, ErrorNote, useNow } from "../ui/Common.tsx"
import { usePaged } from "../ui/Paged.ts"
import { type Column, VirtualTable } from "../ui/VirtualTable.tsx"

const STATUSES = ["", "scheduled", "in_progress", "paused", "completed", "cancelled"] as const

export const windowText = (batch: BatchCall, now: number): string =>
  batch.status === "completed" || batch.status === "cancelled"
    ? "—"
    : batch.window_open_now && batch.next_window_opening_timestamp !== null &&
        batch.next_window_opening_timestamp <= now + 1000
    ? "open"
    : batch.next_window_opening_timestamp === null
    ? "closed"
    : `opens ${relative(batch.next_window_opening_timestamp, now)}`

export const BatchesPage = () => {
  const client = useClient()
  const now = useNow(5000)
  const [status, setStatus] = useState<string>("")
  const list = usePaged(
    (key) =>
      client.post<Page<BatchCall>>("/list-batch-calls", {
        limit: 50,
        ...(key === undefined ? {} : { pagination_key: key }),
        ...(status === "" ? {} : { filter_criteria: { status: { type: "enum", op: "in", value: [status] } } })
      }),
    [status]
  )
  const columns: ReadonlyArray<Column<BatchCall>> = [
    {
      header: "Batch",
      width: "minmax(10rem, 2fr)",
      render: (b) => <a href={href.batch(b.batch_call_id)}>{b.name === "" ? b.batch_call_id : b.name}</a>
    },
    {
      header: "Status",
      width: "minmax(6rem, 1fr)",
      render: (b) => <span class={`badge ${b.status}`}>{b.status}</span>
    },
    { header: "Progress", width: "minmax(10rem, 2fr)", render: (b) => <BatchProgressBar batch={b} /> },
    {
      header: "Created",
      width: "minmax(9rem, 1.5fr)",
      optional: true,
      render: (b) => <time dateTime={isoTime(b.created_timestamp)}>{dateTime(b.created_timestamp)}</time>
    },
    { header: "Window", width: "minmax(7rem, 1fr)", optional: true, render: (b) => windowText(b, now) }
  ]
  return (
    <section aria-labelledby="batches-title">
      <h1 id="batches-title">Batch calls</h1>
      <div class="filters">
        <label for="batch-status">Status</label>
        <select id="batch-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          {STATUSES.map((s) => <option value={s} key={s}>{s === "" ? "any" : s}</option>)}
        </select>
        <button type="button" class="secondary" onClick={list.reload}>Refresh</button>
      </div>
      <ErrorNote error={list.error} />
      <VirtualTable
        label="Batch calls"
        columns={columns}
        rows={list.rows}
        rowKey={(b) => b.batch_call_id}
        hasMore={list.hasMore}
        loading={list.loading}
        loadMore={list.loadMore}
        rowHeight={48}
        empty="No batch calls yet."
      />
    </section>
  )
}
