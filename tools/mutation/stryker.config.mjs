// StrykerJS over the rule modules of packages/domain (issue 28 item 1; docs/decisions/0014-mutation-testing.md,
// docs/testing.md). Run from the repository root by tools/mutation/run.ts (`npm run test:mutation`; CI runs the
// same with --incremental through the `test:mutation` target of @svc/domain).
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  // The modules that decide whether, when and how a call is placed or a page or a lint finding is produced. Kept in
  // step with the module groups of run.ts (a file here and in no group fails the run). The generated zone tables are
  // data, not rules: their test (tools/test/zonesGenerated.test.ts) regenerates them from the source.
  mutate: [
    "packages/domain/src/compliance/LegalHours.ts",
    "packages/domain/src/compliance/CallingPolicy.ts",
    "packages/domain/src/compliance/RecipientZones.ts",
    "packages/domain/src/compliance/AttemptCaps.ts",
    "packages/domain/src/compliance/LegalGroups.ts",
    "packages/domain/src/compliance/LegalHoursPreview.ts",
    "packages/domain/src/compliance/EffectivePolicy.ts",
    "packages/domain/src/compliance/LegalHoursReport.ts",
    "packages/domain/src/compliance/BatchProgressLegalHours.ts",
    "packages/domain/src/CallWindow.ts",
    "packages/domain/src/CallWindow/*.ts",
    "packages/domain/src/Pagination.ts",
    "packages/domain/src/Pagination/*.ts",
    "packages/domain/src/Deprecation/*.ts",
    "packages/domain/src/models/RetryPolicy.ts",
    // the dispatch decisions (issue 29 item 1): allocation, task states, outcomes, legality, leases
    "packages/domain/src/dispatch/*.ts"
  ],
  // The sandbox is a copy of what the domain's tests read: the package, the shared vitest and TypeScript settings and
  // this folder. Copying the whole repository (apps, tools, docs) would cost seconds per run for nothing.
  ignorePatterns: [
    "/*",
    "!/package.json",
    "!/tsconfig.base.json",
    "!/vitest.shared.ts",
    "!/packages",
    "/packages/*",
    "!/packages/domain",
    "!/tools",
    "/tools/*",
    "!/tools/mutation"
  ],
  // Static mutants (code run once, when a module loads: the policy table, the schemas, the catalogues) are left out:
  // each one needs a fresh load and every related test file, the two Intl-oracle property tests included (~15 s),
  // and the 1,284 of them would take 4-5 hours on this machine. Decision 0014 says what holds the tables instead.
  ignoreStatic: true,
  // Every test file of the domain but LegalHours' property test: 200 random cases against the Intl oracle over a
  // 14-day horizon cost ~20 s a run, paid again by every surviving mutant it reaches (a rerun of the compliance
  // mutants took 1 h 45 min with it). The legal-hours rules are held by the example tests and the witness's row by
  // row comparisons, which must kill their mutants on their own (decision 0014).
  testFiles: ["packages/domain/test/**/!(LegalHours.property).test.ts"],
  testRunner: "vitest",
  vitest: { configFile: "tools/mutation/vitest.config.ts", related: true },
  coverageAnalysis: "perTest",
  // The machine has two cores and other engineers' tests run on it (and, in CI, the other Nx target beside this one).
  concurrency: 1,
  // A loaded machine stretches every run; a mutant that loops forever still ends at the timeout.
  timeoutMS: 10_000,
  timeoutFactor: 2,
  // run.ts passes the scratch copy it unpacked from tools/mutation/stryker-incremental.json.gz
  incrementalFile: "reports/mutation/stryker-incremental.json",
  tempDirName: ".stryker-tmp",
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0, reportScoreTable: true },
  thresholds: { high: 90, low: 85, break: 85 }
}
