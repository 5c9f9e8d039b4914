/**
 * The admin subcommands: create-org, create-api-key, add-phone-number, add-agent, import; the batch
 * (batchCommands.ts), webhook (webhookCommands.ts), pre-dial (predialCommands.ts) and calling-policy (policyCommands.ts)
 * ones.
 * Each prints one JSON document on stdout.
 */
import { isE164 } from "@svc/domain/models/E164.ts"
import { Database } from "@svc/store"
import * as ContactSeed from "@svc/store/contacts/ContactSeed.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { checkUrl, WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Console, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import type { SqlClient } from "effect/sql"
import { batchCommands } from "./batchCommands.ts"
import { org } from "./IdFlags.ts"
import * as Import from "./Import.ts"
import { policyCommands } from "./policyCommands.ts"
import { predialCommands } from "./predialCommands.ts"
import * as Progress from "./Progress.ts"
import { webhookCommands } from "./webhookCommands.ts"

const Store = Layer.mergeAll(
  ApiKeys.layer,
  WebhooksRepo.layer,
  Import.Importer.layer
).pipe(Layer.provideMerge(Database.layer))

/** Runs `effect` against the database and prints its result as JSON. */
const run = <A, E>(effect: Effect.Effect<A, E, ApiKeys | WebhooksRepo | Import.Importer | SqlClient.SqlClient>) =>
  effect.pipe(
    Effect.flatMap((result) => Console.log(JSON.stringify(result))),
    Effect.provide(Store)
  )

const createOrg = Command.make(
  "create-org",
  {
    name: Flag.String("name").pipe(Flag.withDescription("Display name")),
    concurrencyLimit: Flag.Int("concurrency-limit").pipe(
      Flag.withDescription("Calls in flight the org may have at once"),
      Flag.withDefault(20)
    )
  },
  ({ concurrencyLimit, name }) =>
    concurrencyLimit < 1
      ? Effect.fail(new Error("--concurrency-limit must be at least 1"))
      : run(
        Effect.map(Effect.flatMap(ApiKeys, (keys) => keys.createOrg(name, concurrencyLimit)), (org_id) => ({ org_id }))
      )
).pipe(Command.withDescription("Create an organisation; prints {\"org_id\"}"))

const createApiKey = Command.make(
  "create-api-key",
  { org },
  ({ org }) => run(Effect.map(Effect.flatMap(ApiKeys, (keys) => keys.createKey(org)), (api_key) => ({ api_key })))
).pipe(Command.withDescription("Create an API key (shown once; only its hash is stored); prints {\"api_key\"}"))

const addPhoneNumber = Command.make(
  "add-phone-number",
  { org, number: Flag.String("number").pipe(Flag.withDescription("E.164 number the org owns")) },
  ({ number, org }) =>
    isE164(number)
      ? run(
        Effect.as(Effect.flatMap(ApiKeys, (keys) => keys.addPhoneNumber(org, number)), {
          org_id: org,
          phone_number: number
        })
      )
      : Effect.fail(new Error(`--number must be an E.164 number like +14155550123 (got "${number}")`))
).pipe(Command.withDescription("Register a number the org owns (a batch call's from_number)"))

const addAgent = Command.make(
  "add-agent",
  {
    org,
    agentId: Flag.String("agent-id").pipe(Flag.withDescription("Agent id")),
    version: Flag.Int("version").pipe(Flag.withDescription("Agent version"), Flag.withDefault(0)),
    webhookUrl: Flag.String("webhook-url").pipe(
      Flag.withDescription("The agent's webhook URL (over the org's default; a task's agent_override wins)"),
      Flag.optional
    )
  },
  ({ agentId, org, version, webhookUrl }) => {
    const badUrl = Option.isSome(webhookUrl) ? checkUrl(webhookUrl.value) : undefined
    return version < 0
      ? Effect.fail(new Error("--version must be 0 or more"))
      : badUrl !== undefined
      ? Effect.fail(new Error(`--webhook-url: ${badUrl}`))
      : run(
        Effect.gen(function*() {
          yield* Effect.flatMap(ApiKeys, (keys) => keys.addAgent(org, agentId, version))
          if (Option.isNone(webhookUrl)) return { org_id: org, agent_id: agentId, version }
          yield* Effect.flatMap(WebhooksRepo, (hooks) => hooks.setAgentWebhook(org, agentId, version, webhookUrl.value))
          return { org_id: org, agent_id: agentId, version, webhook_url: webhookUrl.value }
        })
      )
  }
).pipe(Command.withDescription("Register an agent version (a task's override_agent_id), with its webhook URL"))

const importCommand = Command.make(
  "import",
  {
    org,
    kind: Flag.Literals("kind", Import.kinds).pipe(Flag.withDescription("What the file holds")),
    file: Flag.String("file").pipe(
      Flag.withDescription("JSON Lines file, one record per line (suppressions: also .csv, or a registry's .txt)")
    ),
    source: Flag.String("source").pipe(
      Flag.withDescription(
        "suppressions: the source of lines that give none (default national_dnc for .txt, else import)"
      ),
      Flag.optional
    )
  },
  ({ file, kind, org, source }) =>
    run(
      Effect.map(
        Effect.flatMap(
          Import.Importer,
          (importer) =>
            importer.importFile(org, kind, file, {
              onProgress: Progress.reporter(`import ${kind}`),
              ...(Option.isSome(source) ? { source: source.value } : {})
            })
        ),
        (imported) => ({ imported })
      )
    )
).pipe(Command.withDescription("Import records from a JSON Lines file, all or nothing; prints {\"imported\": N}"))

/** A one-line progress bar on stderr (stdout stays pure JSON). */
const progressBar = (progress: ContactSeed.SeedProgress) => {
  const percent = progress.total === 0 ? 100 : Math.floor((progress.done / progress.total) * 100)
  const filled = Math.floor(percent / 4)
  process.stderr.write(
    `\r${progress.phase.padEnd(7)} [${"#".repeat(filled)}${
      ".".repeat(25 - filled)
    }] ${progress.done}/${progress.total} ${percent}%`
  )
  if (progress.done >= progress.total) process.stderr.write("\n")
}

const seed = Command.make(
  "seed",
  {
    org,
    contacts: Flag.Int("contacts").pipe(Flag.withDescription("How many synthetic contacts to add")),
    seed: Flag.Int("seed").pipe(
      Flag.withDescription("Random seed: the same seed gives the same contacts"),
      Flag.withDefault(1)
    )
  },
  ({ contacts, org, seed }) =>
    contacts < 0
      ? Effect.fail(new Error("--contacts must be 0 or more"))
      : run(
        Effect.gen(function*() {
          yield* Effect.flatMap(ApiKeys, (keys) => keys.requireOrg(org))
          const result = yield* ContactSeed.load([{ orgId: org, contacts }], { seed, onProgress: progressBar }).pipe(
            Effect.orDie
          )
          return {
            org_id: org,
            inserted: result.inserted[0]?.contacts ?? 0,
            rebuilt_indexes: result.rebuiltIndexes,
            millis: result.millis
          }
        })
      )
).pipe(Command.withDescription("Add realistic synthetic contacts (names, numbers, tags, custom fields, history)"))

export const commands = [
  createOrg,
  createApiKey,
  addPhoneNumber,
  addAgent,
  importCommand,
  seed,
  ...batchCommands,
  ...webhookCommands,
  ...predialCommands,
  ...policyCommands
] as const
