// Types for rule.js (plain JavaScript so that eslint.config.js can load it without a TS loader).
export interface Layer {
  readonly dirs: ReadonlyArray<string>
  readonly check: (spec: string, self: string) => string | undefined
}
export declare const layers: Readonly<Record<string, Layer>>
export declare const layerOf: (
  relativePath: string
) => { readonly name: string; readonly layer: Layer; readonly self: string } | undefined
/** `typeOnly`: the import is erased when compiled (`import type`); only rule 3 tells the two apart. */
export declare const violation: (relativePath: string, spec: string, typeOnly?: boolean) => string | undefined
export declare const typeOnlyImports: ReadonlyArray<{
  readonly files: string
  readonly from: ReadonlyArray<string>
  readonly why: string
}>
export declare const typeOnlyPending: ReadonlyArray<{
  readonly file: string
  readonly spec: string
  readonly moves: string
}>
export declare const functionBodies: {
  readonly home: string
  readonly migrations: string
  readonly frozenThrough: number
  readonly forbidden: ReadonlyArray<{ readonly pattern: RegExp; readonly what: string }>
}
export declare const functionBodyViolations: (
  relativePath: string,
  source: string
) => Array<{ readonly line: number; readonly message: string }>
export declare const appMains: {
  readonly file: RegExp
  readonly imports: ReadonlyArray<string>
  readonly forbidden: ReadonlyArray<{ readonly pattern: RegExp; readonly what: string }>
  readonly launch: RegExp
}
export declare const mainViolations: (
  relativePath: string,
  source: string
) => Array<{ readonly line: number; readonly message: string }>
