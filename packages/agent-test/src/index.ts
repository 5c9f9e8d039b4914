/**
 * Runs test cases against custom-LLM WebSocket servers (decisions 0703, 0706): scripted ones (`Runner`) and
 * simulations played and judged by a chat-completions model (`Simulation`, `ChatCompletions`); the scheduler and
 * svc-test share it.
 */
export * as ChatCompletions from "./ChatCompletions.ts"
export * as Runner from "./Runner.ts"
export * as Simulation from "./Simulation.ts"
