/** Runs scripted test cases against custom-LLM WebSocket servers (issue 32): the scheduler and svc-test share it. */
export * as Runner from "./Runner.ts"
