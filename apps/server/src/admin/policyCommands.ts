/**
 * Admin subcommands for an organisation's calling policy (decision 0628: "Per-org override of the policy
 * (stricter always allowed; looser only with an explicit, audited admin flag)"), printing JSON
 * on stdout. What an override makes of the policy and whether it may be set are the domain's decisions
 * (`@svc/domain/compliance/EffectivePolicy.ts`), run here; `@svc/store/CallingPolicyRepo.ts` stores what was decided.
 *
 * - `set-calling-policy --org ID --file PATH [--approved-by NAME --reason TEXT]`: the file holds the org's whole
 *   override, `{"rules": [JurisdictionRule, ...]}` (docs/operations.md shows one); it replaces the previous one. A
 *   row looser than the default policy's is refused, naming each loosening, unless both `--approved-by` and
 *   `--reason` are given: that approval is the explicit admin flag, and the audit log keeps it. The approval is
 *   never read from the file, so an override cannot approve itself.
 * - `clear-calling-policy --org ID`: back to the default policy.
 * - `calling-policy --org ID [--audit N]`: the effective policy, the override and its version, the newest changes.
 */
import { PolicyOverride } from "@svc/domain/compliance/CallingPolicy.ts"
import { decideOverride, defaultEffective, effectiveOfStored } from "@svc/domain/compliance/EffectivePolicy.ts"
import { formatDecodeError } from "@svc/domain/models/DecodeMessage.ts"
import { requestParseOptions } from "@svc/domain/models/RequestDecoding.ts"
import { Database } from "@svc/store"
import { CallingPolicyRepo } from "@svc/store/policies/CallingPolicyRepo.ts"
import { Clock, Console, Effect, Layer, Option, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import * as fs from "node:fs"
import { org } from "./IdFlags.ts"

const Store = CallingPolicyRepo.layer.pipe(Layer.provide(Database.layer))

const print = <A, E>(effect: Effect.Effect<A, E, CallingPolicyRepo>) =>
  effect.pipe(
    Effect.flatMap((result) => Console.log(JSON.stringify(result, null, 2))),
    Effect.provide(Store)
  )

/** The file's rows: `{"rules": [...]}` and nothing else (the approval comes from flags only). */
const FileOverride = Schema.Struct({ rules: PolicyOverride.fields.rules })
const decodeFile = Schema.decodeUnknownEffect(FileOverride)

const readOverride = (file: string) =>
  Effect.gen(function*() {
    const text = yield* Effect.try({
      try: () => fs.readFileSync(file, "utf8"),
      catch: (error) => new Error(`cannot read --file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`)
    })
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => new Error(`--file ${file} is not JSON: ${(error as Error).message}`)
    })
    return yield* decodeFile(json, requestParseOptions).pipe(
      Effect.mapError((error) =>
        new Error(`--file ${file}: ${formatDecodeError(error, { input: json, root: "the policy file" })}`)
      )
    )
  })

const setCallingPolicy = Command.make(
  "set-calling-policy",
  {
    org,
    file: Flag.String("file").pipe(Flag.withDescription("JSON file: {\"rules\": [...]}, the org's whole override")),
    approvedBy: Flag.String("approved-by").pipe(
      Flag.withDescription("Who approved rows looser than the default policy (recorded in the audit log)"),
      Flag.optional
    ),
    reason: Flag.String("reason").pipe(
      Flag.withDescription("Why the looser rows are approved (recorded in the audit log)"),
      Flag.optional
    )
  },
  ({ approvedBy, file, org, reason }) =>
    Effect.gen(function*() {
      const by = Option.getOrUndefined(approvedBy)?.trim()
      const why = Option.getOrUndefined(reason)?.trim()
      if ((by === undefined) !== (why === undefined)) {
        return yield* Effect.fail(new Error("--approved-by and --reason go together: give both or neither"))
      }
      if (by === "" || why === "") return yield* Effect.fail(new Error("--approved-by and --reason must not be empty"))
      const { rules } = yield* readOverride(file)
      const override: PolicyOverride = by === undefined || why === undefined
        ? { rules }
        : { rules, allowLooser: { approvedBy: by, reason: why } }
      yield* print(Effect.gen(function*() {
        // refused before anything is stored: a looser row without the admin's approval (LooserThanPolicy)
        const decided = yield* Effect.fromResult(decideOverride(override))
        const repo = yield* CallingPolicyRepo
        const set = yield* repo.set(org, decided, yield* Clock.currentTimeMillis)
        return { org_id: org, version: set.version, policy: decided.policy }
      }))
    })
).pipe(Command.withDescription("Set the org's calling-policy override (stricter rows; looser only with approval)"))

const clearCallingPolicy = Command.make(
  "clear-calling-policy",
  { org },
  ({ org }) =>
    print(Effect.gen(function*() {
      const repo = yield* CallingPolicyRepo
      const cleared = yield* repo.clear(org, yield* Clock.currentTimeMillis)
      return { org_id: org, version: cleared.version, policy: defaultEffective.policy }
    }))
).pipe(Command.withDescription("Remove the org's calling-policy override: the default policy applies"))

const callingPolicy = Command.make(
  "calling-policy",
  {
    org,
    audit: Flag.Int("audit").pipe(Flag.withDescription("Newest changes shown (default 20)"), Flag.withDefault(20))
  },
  ({ audit, org }) =>
    audit < 0 ? Effect.fail(new Error("--audit must be 0 or more")) : print(Effect.gen(function*() {
      const repo = yield* CallingPolicyRepo
      const effective = effectiveOfStored(yield* repo.stored(org))
      return {
        org_id: org,
        version: effective.version,
        override: effective.override ?? null,
        policy: effective.policy,
        audit: audit === 0 ? [] : yield* repo.audit(org, audit)
      }
    }))
).pipe(Command.withDescription("The org's effective calling policy, its override and the audit log (JSON)"))

export const policyCommands = [setCallingPolicy, clearCallingPolicy, callingPolicy] as const
