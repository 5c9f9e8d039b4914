/**
 * The pure domain of svc: resource models, call windows, pagination keys and the deprecation
 * schedule. Imports only `effect` (the dependency rule, docs/architecture.md). Each module is also
 * importable on its own (`@svc/domain/CallWindow.ts`), which keeps start-up lean for the linter.
 */
export * as CallWindow from "./CallWindow.ts"
export * as DeprecationCatalogue from "./Deprecation/Catalogue.ts"
export * as DeprecationEndpoints from "./Deprecation/Endpoints.ts"
export * as DeprecationEngine from "./Deprecation/Engine.ts"
export * as DeprecationFixes from "./Deprecation/Fixes.ts"
export * as DeprecationKind from "./Deprecation/Kind.ts"
export * as DeprecationLanguage from "./Deprecation/Language.ts"
export * as DeprecationRule from "./Deprecation/Rule.ts"
export * as DeprecationSchedule from "./Deprecation/Schedule.ts"
export * from "./models/AgentOverride.ts"
export * from "./models/BackfillJob.ts"
export * from "./models/BatchCall.ts"
export * from "./models/BatchCallTask.ts"
export * from "./models/Contact.ts"
export * from "./models/ContactInput.ts"
export * from "./models/DecodeMessage.ts"
export * from "./models/E164.ts"
export * from "./models/FilterCondition.ts"
export * from "./models/Ids.ts"
export * from "./models/ListBatchTests.ts"
export * from "./models/ListContacts.ts"
export * from "./models/Primitives.ts"
export * from "./models/ResponseEngine.ts"
export * from "./models/TestCaseBatchJob.ts"
