/**
 * Batch tests' pure rules (decisions 0700, 0701): test-case definitions, the custom-LLM protocol's frames, and the
 * verdict of a scripted run.
 */
export * as Protocol from "./Protocol.ts"
export * as TestCaseDefinition from "./TestCaseDefinition.ts"
export * as TestRun from "./TestRun.ts"
export * as Verdict from "./Verdict.ts"
