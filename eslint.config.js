// ESLint flat config shared by every workspace package (each package's eslint.config.js re-exports
// it, so `eslint .` inside a package and Nx's cached `lint` target see the same rules).
import js from "@eslint/js"
import path from "node:path"
import { fileURLToPath } from "node:url"
import tseslint from "typescript-eslint"
import { violation } from "./tools/dependency-rule/rule.js"

const root = path.dirname(fileURLToPath(import.meta.url))

/** The monorepo's dependency rule (tools/dependency-rule/rule.js) as an ESLint rule. */
const dependencyRule = {
  meta: { type: "problem", docs: { description: "enforce the package dependency rule" }, schema: [] },
  create(context) {
    const file = path.relative(root, context.filename).split(path.sep).join("/")
    // typeOnly: typescript-eslint marks an erased import `importKind: "type"` (`import type …`) and an erased
    // re-export `exportKind: "type"`; `import { type A }` stays "value" (it still loads the module), as in check.ts.
    const check = (source, typeOnly) => {
      if (!source || source.type !== "Literal" || typeof source.value !== "string") return
      const message = violation(file, source.value, typeOnly)
      if (message) context.report({ node: source, message })
    }
    return {
      ImportDeclaration: (node) => check(node.source, node.importKind === "type"),
      ExportNamedDeclaration: (node) => check(node.source, node.exportKind === "type"),
      ExportAllDeclaration: (node) => check(node.source, node.exportKind === "type"),
      ImportExpression: (node) => check(node.source, false)
    }
  }
}

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", "**/.svc/**", "**/.toolchain/**", "**/.nx/**", "**/coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      globals: {
        process: "readonly",
        console: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly"
      }
    },
    plugins: { svc: { rules: { "dependency-rule": dependencyRule } } },
    rules: {
      "svc/dependency-rule": "error",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-namespace": "off",
      "no-console": "error",
      "require-yield": "off"
    }
  },
  {
    // Bootstrap runs on the machine's old Node before any dependency exists: CommonJS on purpose.
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: {
        require: "readonly",
        __dirname: "readonly",
        process: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly"
      }
    },
    rules: { "@typescript-eslint/no-require-imports": "off", "no-console": "off" }
  }
)
