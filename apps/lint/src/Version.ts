/** The linter's version, from its package.json (SARIF `tool.driver.version`, `--version`). */
import manifest from "../package.json" with { type: "json" }

export const VERSION: string = manifest.version
