// The domain's own vitest settings, rooted at packages/domain: Stryker starts vitest from the sandbox's top
// directory (it copies the repository, see stryker.config.mjs), where `include: ["test/**/*.test.ts"]` would match
// nothing. Everything else is packages/domain/vitest.config.ts unchanged, so the mutants face the same tests as CI,
// with one addition: the property tests' seed is pinned (vitest.setup.ts says why).
import * as path from "node:path"
import { defineConfig, mergeConfig } from "vitest/config"
import domain from "../../packages/domain/vitest.config.ts"

export default mergeConfig(
  domain,
  defineConfig({
    root: path.resolve(import.meta.dirname, "../../packages/domain"),
    test: { setupFiles: [path.resolve(import.meta.dirname, "vitest.setup.ts")] }
  })
)
