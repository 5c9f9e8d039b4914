// The restart storm (issue 30 item 3, decision 0441), timed: 4 svc-server and 4 svc-scheduler processes on one
// PostgreSQL with max_connections = 100 through PgBouncer in transaction mode, mixed API load and a 20,000-task batch
// on the simulated carrier; twice, every process SIGKILLed at once and all started again together. The scenario is
// the test's (tools/test/support/StormScenario.ts); this prints its phases per round and their medians:
// - time to all ready: the first start, and after each restart (from the spawn to the last /readyz 200 or
//   "svc-scheduler started"); time from the spawn to the batch's first task taken again;
// - the batch's tasks taken per second before the first kill and after the last restart;
// - the most connections of each kind seen at any sample, against the budget (docs/operations.md);
// - the API's 503 answers (all with Retry-After, else the round says so) and requests with no answer while down.
// Each round also checks what the test asserts (0 dialled twice, 0 lost, no other answer, no overrun) and says so.
//
//   node tools/bench/replicas.bench.ts [--rounds=3] [--tasks=20000] [--poll]
//     --poll: no DATABASE_DIRECT_URL (nothing listens, wake-ups poll every second, migrations through the pooler)
//
// Prints a Markdown section for docs/benchmarks.md (dated, with the commit and the load average); exit code 0 unless a
// round broke an invariant.
import * as os from "node:os"
import type { Counts } from "../test/support/StormCluster.ts"
import { defaults, runStorm, type StormReport } from "../test/support/StormScenario.ts"
import { argument, gitCommit, median } from "./support/BenchSupport.ts"

const ROUNDS = argument("rounds", 3)
const TASKS = argument("tasks", defaults.tasks)
const POLL = process.argv.includes("--poll")

const log = (line: string) => process.stderr.write(`${line}\n`)
const commit = gitCommit()

/** What the test asserts, for one round: empty when the round kept every invariant. */
const broken = (report: StormReport): Array<string> => {
  const d = report.dials
  const found: Array<string> = []
  if (d.repeated > 0 || d.attempts !== d.keys) found.push(`${d.repeated} tasks dialled twice`)
  if (d.unfinished > 0 || d.keys !== d.tasks || d.tasksWithoutOneCall > 0) {
    found.push(
      `lost: ${d.unfinished} unfinished, ${d.tasks - d.keys} never dialled, ${d.tasksWithoutOneCall} without one call`
    )
  }
  if (report.load.unexpectedCount > 0) found.push(`${report.load.unexpectedCount} unexpected answers`)
  if (report.overruns.length > 0) found.push(`${report.overruns.length} budget overruns`)
  if (report.budgetWarnings.length > 0) found.push(`${report.budgetWarnings.length} budget warnings`)
  return found
}

const loadBefore = os.loadavg()
const startedAt = new Date()
const reports: Array<StormReport> = []
const failures: Array<string> = []
for (let round = 1; round <= ROUNDS; round++) {
  log(`round ${round} of ${ROUNDS}`)
  const report = await runStorm({ tasks: TASKS, listen: !POLL, say: (line) => log(`  ${line}`) })
  reports.push(report)
  const problems = broken(report)
  for (const problem of problems) failures.push(`round ${round}: ${problem}`)
  log(`  round ${round}: ${problems.length === 0 ? "every invariant held" : problems.join("; ")}`)
  for (const line of [...report.overruns.slice(0, 5), ...report.load.unexpected.slice(0, 5)]) log(`    ${line}`)
  for (const line of report.processWarnings) log(`    logged: ${line}`)
}
const loadAfter = os.loadavg()

const s = (ms: number) => `${(ms / 1_000).toFixed(1)} s`
const med = (pick: (r: StormReport) => number) => median(reports.map(pick))
const rounds = (pick: (r: StormReport) => number, format: (n: number) => string) =>
  reports.map((r) => format(pick(r))).join(", ")
const row = (what: string, pick: (r: StormReport) => number, format: (n: number) => string) =>
  `| ${what} | ${format(med(pick))} | ${rounds(pick, format)} |`
const budgets = reports[0]!.budgets
const kinds: Array<[keyof Counts, string]> = [
  ["postgresTotal", "PostgreSQL client backends, all (pooler's servers + direct + the sampler)"],
  ["pooledBackends", "PostgreSQL backends opened by the pooler"],
  ["directPerScheduler", "direct (LISTEN, migration) connections of one scheduler"],
  ["directPerServer", "direct (migration) connections of one server"],
  ["poolerServers", "PgBouncer server connections (SHOW POOLS sv_*)"],
  ["poolerClients", "PgBouncer client connections (SHOW POOLS cl_*)"],
  ["poolerClientsPerProcess", "PgBouncer client connections of one process (SHOW CLIENTS)"]
]
const storms = reports[0]!.restarts.length
const lines = [
  `### ${startedAt.toISOString().slice(0, 10)}, ${startedAt.toISOString().slice(11, 16)} UTC, commit ${commit}` +
  (POLL ? " (poll mode)" : ""),
  "",
  `\`node tools/bench/replicas.bench.ts --rounds=${ROUNDS}${TASKS === defaults.tasks ? "" : ` --tasks=${TASKS}`}` +
  `${POLL ? " --poll" : ""}\`: ${defaults.servers} servers and ${defaults.schedulers} schedulers, ` +
  `SVC_DB_MAX_CONNECTIONS ${defaults.processPool}, PgBouncer 1.18 default_pool_size ${defaults.poolerPool} / ` +
  `max_client_conn ${defaults.maxClientConnections}, max_connections ${defaults.maxConnections}, ` +
  (POLL ? "no DATABASE_DIRECT_URL (poll mode)" : "DATABASE_DIRECT_URL on PostgreSQL (LISTEN)") +
  `; ${TASKS.toLocaleString("en-US")} tasks, org limit ${defaults.concurrencyLimit}, calls of ` +
  `${defaults.latencyMs} ms, lease ${defaults.leaseMs / 1_000} s, ${defaults.loadClients} load clients; ` +
  `${storms} storms. Load average ${loadBefore.map((n) => n.toFixed(1)).join(" ")} before, ` +
  `${loadAfter.map((n) => n.toFixed(1)).join(" ")} after; ${os.cpus().length} cores.`,
  "",
  "| phase | median | rounds |",
  "| --- | --- | --- |",
  row("first start, spawn to all 8 ready", (r) => r.firstStartMs, s),
  ...Array.from({ length: storms }, (_, i) => [
    row(`restart ${i + 1}, spawn to all 8 ready`, (r) => r.restarts[i]!.allReadyMs, s),
    row(`restart ${i + 1}, spawn to the batch's next task taken`, (r) => r.restarts[i]!.firstTakenMs, s),
    row(`restart ${i + 1}, tasks in flight at the kill`, (r) => r.restarts[i]!.inFlightAtKill, String)
  ]).flat(),
  row("tasks/s before the first storm", (r) => r.tasksPerSecondBefore, (n) => n.toFixed(0)),
  row("tasks/s after the last restart", (r) => r.tasksPerSecondAfter, (n) => n.toFixed(0)),
  row("batch created to every task finished and every batch completed", (r) => r.batchMs, s),
  row("API answers 2xx", (r) => Object.values(r.load.served).reduce((a, b) => a + b, 0), String),
  row("API answers 503 with Retry-After", (r) => r.load.unavailable, String),
  row("requests with no answer while a server was down", (r) => r.load.noAnswerWhileDown, String),
  row(
    "unexpected answers (other status, 503 without Retry-After, no answer while up)",
    (r) => r.load.unexpectedCount,
    String
  ),
  row("tasks dialled twice", (r) => r.dials.repeated, String),
  row(
    "tasks lost (unfinished, or without exactly one call)",
    (r) => r.dials.unfinished + r.dials.tasksWithoutOneCall,
    String
  ),
  row("connection samples", (r) => r.samples, String),
  "",
  "| connections | budget | most seen (median of rounds) | rounds |",
  "| --- | --- | --- | --- |",
  ...kinds.map(([key, what]) =>
    `| ${what} | ${budgets[key]} | ${med((r) => r.maxima[key])} | ${rounds((r) => r.maxima[key], String)} |`
  ),
  "",
  failures.length === 0 ? "Every round kept every invariant." : `Broken: ${failures.join("; ")}.`
]
process.stdout.write(`${lines.join("\n")}\n`)
process.exitCode = failures.length === 0 ? 0 : 1
