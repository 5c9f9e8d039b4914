import { defineConfig, mergeConfig } from "vitest/config"
import shared from "../vitest.shared.ts"

// These tests start whole processes (npm start, three scheduler workers SIGKILLed in a loop, a
// browser): run the files one after another so none starves another of the two cores.
export default mergeConfig(shared, defineConfig({ test: { fileParallelism: false } }))
