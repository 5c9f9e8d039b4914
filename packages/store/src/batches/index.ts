/**
 * Batch calls (decision 0302): what other features and the apps may use of batches. `BatchCallsRepo` is the
 * service composed of CreateBatchCall, TaskPreparer, CanonicalJson, Idempotency and BatchCallReads (its errors,
 * models and constants come with it); `BatchProgressRepo` the progress and cancelling of a batch; `BatchRetry` the retry of its finished tasks.
 */
export * from "./BatchCallsRepo.ts"
export * from "./BatchProgressRepo.ts"
export * from "./BatchRetry.ts"
