/** Calls (POST /v3/list-calls): filter by status, batch, number and time range; cursor paged, newest first. */
import { useState } from "preact/hooks"
import type { Call, Page } from "../api/Types.ts"
import { href } from "../Router.ts"
import { timingColumns } from "../ui/CallColumns.tsx"
import { useClient } from "../ui/ClientContext.ts"
import { ErrorNote } from "../ui/Common.tsx"
import { usePaged } from "../ui/Paged.ts"
import { type Column, VirtualTable } from "../ui/VirtualTable.tsx"

const STATUSES = ["", "registered", "ongoing", "ended", "not_connected", "error"] as const

interface Filters {
  readonly status: string
  readonly batch: string
  readonly number: string
  readonly from: string
  readonly to: string
}

/** The list-calls `filter_criteria` of the form's values (docs/api.md "list-calls filters"). */
export const callFilter = (f: Filters): Record<string, unknown> => {
  const criteria: Record<string, unknown> = {}
  if (f.status !== "") criteria["call_status"] = { type: "enum", op: "in", value: [f.status] }
  if (f.batch.trim() !== "") criteria["batch_call_id"] = { type: "string", op: "eq", value: f.batch.trim() }
  if (f.number.trim() !== "") criteria["to_number"] = { type: "string", op: "sw", value: f.number.trim() }
  const lo = f.from === "" ? undefined : Date.parse(f.from)
  const hi = f.to === "" ? undefined : Date.parse(f.to)
  if (lo !== undefined && hi !== undefined && !Number.isNaN(lo) && !Number.isNaN(hi)) {
    criteria["start_timestamp"] = { type: "range", op: "bt", value: [lo, hi] }
  } else if (lo !== undefined && !Number.isNaN(lo)) {
    criteria["start_timestamp"] = { type: "number", op: "ge", value: lo }
  } else if (hi !== undefined && !Number.isNaN(hi)) {
    criteria["start_timestamp"] = { type: "number", op: "le", value: hi }
  }
  return criteria
}

export const CallsPage = (props: { readonly batchCallId?: string }) => {
  const client = useClient()
  const initial: Filters = { status: "", batch: props.batchCallId ?? "", number: "", from: "", to: "" }
  const [form, setForm] = useState<Filters>(initial)
  const [applied, setApplied] = useState<Filters>(initial)
  const list = usePaged(
    (key) => {
      const criteria = callFilter(applied)
      return client.post<Page<Call>>("/v3/list-calls", {
        limit: 100,
        ...(key === undefined ? {} : { pagination_key: key }),
        ...(Object.keys(criteria).length === 0 ? {} : { filter_criteria: criteria })
      })
    },
    [applied]
  )
  const field = (name: keyof Filters) => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [name]: event.currentTarget.value })
  const columns: ReadonlyArray<Column<Call>> = [
    { header: "Call", width: "minmax(10rem, 2fr)", render: (c) => <a href={href.call(c.call_id)}>{c.call_id}</a> },
    {
      header: "Status",
      width: "minmax(6rem, 1fr)",
      render: (c) => <span class={`badge ${c.call_status}`}>{c.call_status}</span>
    },
    { header: "To", width: "minmax(8rem, 1fr)", render: (c) => c.to_number ?? "" },
    ...timingColumns<Call>({ startedOptional: true }),
    {
      header: "Batch",
      width: "minmax(8rem, 1.4fr)",
      optional: true,
      render: (c) => c.batch_call_id === undefined ? "" : <a href={href.batch(c.batch_call_id)}>{c.batch_call_id}</a>
    }
  ]
  return (
    <section aria-labelledby="calls-title">
      <h1 id="calls-title">Calls</h1>
      <form
        class="filters"
        aria-label="Filter calls"
        onSubmit={(e) => {
          e.preventDefault()
          setApplied(form)
        }}
      >
        <label for="call-status">Status</label>
        <select id="call-status" value={form.status} onChange={field("status")}>
          {STATUSES.map((s) => <option value={s} key={s}>{s === "" ? "any" : s}</option>)}
        </select>
        <label for="call-batch">Batch id</label>
        <input id="call-batch" value={form.batch} onInput={field("batch")} />
        <label for="call-number">Number starts with</label>
        <input id="call-number" inputMode="tel" value={form.number} onInput={field("number")} />
        <label for="call-from">Started from</label>
        <input id="call-from" type="datetime-local" value={form.from} onInput={field("from")} />
        <label for="call-to">until</label>
        <input id="call-to" type="datetime-local" value={form.to} onInput={field("to")} />
        <button type="submit">Apply</button>
      </form>
      <ErrorNote error={list.error} />
      <VirtualTable
        label="Calls"
        columns={columns}
        rows={list.rows}
        rowKey={(c) => c.call_id}
        hasMore={list.hasMore}
        loading={list.loading}
        loadMore={list.loadMore}
        empty="No calls match."
      />
    </section>
  )
}
