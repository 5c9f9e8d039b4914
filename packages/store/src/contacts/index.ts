/**
 * Contacts: what other features and the apps may use of them (rule 5 of the dependency rule). `ContactsRepo` is the
 * API's statements over an org's contacts; `ContactsQuery` the search text every writer of a contact's searchable
 * fields computes the same way (calls import it for the contacts they create). The import and the seed are the
 * admin commands' and are imported by path from the apps.
 */
export * from "./ContactsQuery.ts"
export * from "./ContactsRepo.ts"
