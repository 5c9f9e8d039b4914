/**
 * PostgreSQL adapters: the database layer (embedded server or `DATABASE_URL`), migrations and,
 * in later issues, the repositories that implement the domain's ports.
 */
export * as Database from "./Database.ts"
export * as DatabaseAdmin from "./DatabaseAdmin.ts"
export * as EmbeddedPostgres from "./EmbeddedPostgres.ts"
export * as Migrations from "./Migrations.ts"
