/**
 * One batch test job (GET /get-batch-test) and its runs (GET /v2/list-test-runs), each with its verdict; a run's
 * explanation and transcript (GET /get-test-run) open below the list. Refreshed every 3 s while the job runs.
 */
import { useEffect, useState } from "preact/hooks"
import type { Page, TestJob, TestRun } from "../api/Types.ts"
import { count } from "../Format.ts"
import { href } from "../Router.ts"
import { useClient } from "../ui/ClientContext.ts"
import { ErrorNote, Fields, Json } from "../ui/Common.tsx"
import { usePaged } from "../ui/Paged.ts"
import { type Column, VirtualTable } from "../ui/VirtualTable.tsx"
import { rememberJob } from "./Tests.tsx"

const Transcript = (props: { readonly value: unknown }) => {
  if (!Array.isArray(props.value)) return <Json value={props.value} label="Transcript" />
  return (
    <ol class="transcript">
      {props.value.map((turn: unknown, i) => {
        const t = (typeof turn === "object" && turn !== null ? turn : {}) as Record<string, unknown>
        return (
          <li key={i} class={String(t["role"] ?? "")}>
            <strong>{String(t["role"] ?? "?")}:</strong>{" "}
            {typeof t["content"] === "string" ? t["content"] : JSON.stringify(t)}
          </li>
        )
      })}
    </ol>
  )
}

export const TestJobPage = (props: { readonly id: string }) => {
  const client = useClient()
  const [job, setJob] = useState<TestJob | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [selected, setSelected] = useState<TestRun | undefined>(undefined)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined
    client.get<TestJob>(`/get-batch-test/${encodeURIComponent(props.id)}`).then((j) => {
      setJob(j)
      rememberJob(props.id)
      if (j.status === "in_progress") timer = setTimeout(() => setTick((n) => n + 1), 3000)
    }, (e: Error) => setError(e.message))
    return () => timer === undefined ? undefined : clearTimeout(timer)
  }, [props.id, tick])
  const runs = usePaged(
    (key) =>
      client.get<Page<TestRun>>(
        `/v2/list-test-runs/${encodeURIComponent(props.id)}?limit=200${
          key === undefined ? "" : `&pagination_key=${encodeURIComponent(key)}`
        }`
      ),
    [props.id, tick]
  )
  const open = (run: TestRun) =>
    client.get<TestRun>(`/get-test-run/${encodeURIComponent(run.test_case_job_id)}`).then(
      setSelected,
      (e: Error) => setError(e.message)
    )
  const columns: ReadonlyArray<Column<TestRun>> = [
    {
      header: "Test",
      width: "minmax(10rem, 2fr)",
      render: (r) => r.test_case_definition_snapshot?.name ?? r.test_case_definition_id
    },
    {
      header: "Verdict",
      width: "minmax(6rem, 1fr)",
      render: (r) => <span class={`badge ${r.status}`}>{r.status}</span>
    },
    {
      header: "Details",
      width: "minmax(6rem, 1fr)",
      render: (r) => (
        <button
          type="button"
          class="link"
          onClick={() => void open(r)}
          aria-label={`Transcript of ${r.test_case_definition_snapshot?.name ?? r.test_case_definition_id}`}
        >
          Transcript
        </button>
      )
    }
  ]
  return (
    <section aria-labelledby="test-title">
      <p class="crumbs">
        <a href={href.tests()}>Batch tests</a> /
      </p>
      <h1 id="test-title">Batch test {props.id}</h1>
      <ErrorNote error={error} />
      {job === undefined ? null : (
        <Fields
          rows={[
            ["Status", <span class={`badge ${job.status}`}>{job.status}</span>],
            ["Passed", count(job.pass_count)],
            ["Failed", count(job.fail_count)],
            ["Errors", count(job.error_count)],
            ["Total", count(job.total_count)]
          ]}
        />
      )}
      <ErrorNote error={runs.error} />
      <VirtualTable
        label="Test runs"
        columns={columns}
        rows={runs.rows}
        rowKey={(r) => r.test_case_job_id}
        hasMore={runs.hasMore}
        loading={runs.loading}
        loadMore={runs.loadMore}
        empty="No runs."
      />
      {selected === undefined ? null : (
        <section class="panel" aria-labelledby="run-title">
          <h2 id="run-title">
            {selected.test_case_definition_snapshot?.name ?? selected.test_case_definition_id}:{" "}
            <span class={`badge ${selected.status}`}>{selected.status}</span>
          </h2>
          {selected.result_explanation === undefined || selected.result_explanation === null
            ? null
            : <pre class="transcript-text">{String(selected.result_explanation)}</pre>}
          <h3>Transcript</h3>
          {selected.transcript_snapshot === null || selected.transcript_snapshot === undefined
            ? <p>No transcript.</p>
            : <Transcript value={selected.transcript_snapshot} />}
        </section>
      )}
    </section>
  )
}
