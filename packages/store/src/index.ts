/**
 * PostgreSQL adapters: the database layer (embedded server or `DATABASE_URL`), migrations and,
 * in later issues, the repositories that implement the domain's ports.
 */
export * as Database from "./db/Database.ts"
export * as DatabaseAdmin from "./db/DatabaseAdmin.ts"
export * as EmbeddedPostgres from "./db/EmbeddedPostgres.ts"
export * as Migrations from "./db/Migrations.ts"
