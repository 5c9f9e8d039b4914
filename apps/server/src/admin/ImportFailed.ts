import { Schema } from "effect"

/** Bad input file: every problem with its line number (at most 20 listed), or why nothing was imported. */
export class ImportFailed extends Schema.TaggedError<ImportFailed>()("ImportFailed", { message: Schema.String }) {}
