/**
 * Batch tests (decision 0702): a job opened by its id (the answer of POST /create-batch-test, or a CI log), and the jobs
 * opened before in this tab. The public API lists batch-test jobs only per svc-llm or conversation flow
 * (GET /v2/list-batch-tests), and the jobs svc runs are custom-LLM ones, so there is no list of them to show
 * (docs/decisions/0800).
 */
import { useState } from "preact/hooks"
import { href } from "../Router.ts"

const RECENT = "svc.console.recentTestJobs"

export const recentJobs = (): ReadonlyArray<string> => {
  try {
    const stored: unknown = JSON.parse(sessionStorage.getItem(RECENT) ?? "[]")
    return Array.isArray(stored) ? stored.filter((s): s is string => typeof s === "string") : []
  } catch {
    return []
  }
}

export const rememberJob = (id: string): void => {
  const next = [id, ...recentJobs().filter((j) => j !== id)].slice(0, 20)
  sessionStorage.setItem(RECENT, JSON.stringify(next))
}

export const TestsPage = () => {
  const [id, setId] = useState("")
  const recent = recentJobs()
  return (
    <section aria-labelledby="tests-title">
      <h1 id="tests-title">Batch tests</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          if (id.trim() !== "") location.hash = href.test(id.trim())
        }}
      >
        <label for="test-job">Batch test job id</label>
        <input id="test-job" value={id} onInput={(e) => setId(e.currentTarget.value)} />
        <button type="submit">Open</button>
      </form>
      <h2>Opened in this tab</h2>
      {recent.length === 0 ? <p>None yet.</p> : (
        <ul>
          {recent.map((j) => (
            <li key={j}>
              <a href={href.test(j)}>{j}</a>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
