/**
 * Batch tests (decision 0702): jobs, test-case definitions and the runs the scheduler executes.
 */
export * from "./BatchTestsRepo.ts"
export * from "./TestCaseDefinitionsRepo.ts"
export * from "./TestRunsRepo.ts"
