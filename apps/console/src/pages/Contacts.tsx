/**
 * Contacts (POST /list-contacts): search and page through all of the org's contacts at the API's pace, a page of
 * 100 fetched as the user scrolls near it; `total` is exact on every page (docs/api.md).
 */
import { useEffect, useState } from "preact/hooks"
import type { Contact, Page } from "../api/Types.ts"
import { count, dateTime, isoTime } from "../Format.ts"
import { href } from "../Router.ts"
import { useClient } from "../ui/ClientContext.ts"
import { ErrorNote } from "../ui/Common.tsx"
import { usePaged } from "../ui/Paged.ts"
import { type Column, VirtualTable } from "../ui/VirtualTable.tsx"

const SEARCH_DELAY_MS = 300

const name = (c: Contact) => [c.first_name, c.last_name].filter((p) => p !== undefined && p !== "").join(" ")

export const ContactsPage = () => {
  const client = useClient()
  const [typed, setTyped] = useState("")
  const [query, setQuery] = useState("")
  // one request per pause in typing, not per key
  useEffect(() => {
    const timer = setTimeout(() => setQuery(typed.trim()), SEARCH_DELAY_MS)
    return () => clearTimeout(timer)
  }, [typed])
  const list = usePaged(
    (key) =>
      client.post<Page<Contact>>("/list-contacts", {
        limit: key === undefined ? 50 : 200,
        ...(key === undefined ? {} : { pagination_key: key }),
        ...(query === "" ? {} : { search_query: query })
      }),
    [query]
  )
  const columns: ReadonlyArray<Column<Contact>> = [
    {
      header: "Name",
      width: "minmax(9rem, 1.5fr)",
      render: (c) => <a href={href.contact(c.contact_id)}>{name(c) === "" ? c.contact_id : name(c)}</a>
    },
    { header: "Phone", width: "minmax(8rem, 1fr)", render: (c) => c.phone_number },
    { header: "External id", width: "minmax(6rem, 1fr)", optional: true, render: (c) => c.external_id ?? "" },
    {
      header: "Conversations",
      width: "minmax(5rem, 0.7fr)",
      optional: true,
      render: (c) => count(c.conversation_count)
    },
    {
      header: "Last conversation",
      width: "minmax(9rem, 1.3fr)",
      optional: true,
      render: (c) =>
        c.last_conversation_timestamp === undefined
          ? "never"
          : <time dateTime={isoTime(c.last_conversation_timestamp)}>{dateTime(c.last_conversation_timestamp)}</time>
    },
    { header: "Do not call", width: "minmax(4rem, 0.6fr)", optional: true, render: (c) => (c.do_not_call ? "yes" : "") }
  ]
  return (
    <section aria-labelledby="contacts-title">
      <h1 id="contacts-title">Contacts</h1>
      <div class="filters" role="search">
        <label for="contact-search">Search</label>
        <input
          id="contact-search"
          type="search"
          placeholder="name, number, external id, field value"
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
        />
        <span class="note" aria-live="polite">
          {list.total === undefined
            ? ""
            : `${count(list.total)} ${list.total === 1 ? "contact" : "contacts"}${
              query === "" ? "" : list.total === 1 ? " matches" : " match"
            }`}
        </span>
      </div>
      <ErrorNote error={list.error} />
      <VirtualTable
        label="Contacts"
        columns={columns}
        rows={list.rows}
        rowKey={(c) => c.contact_id}
        hasMore={list.hasMore}
        loading={list.loading}
        loadMore={list.loadMore}
        {...(list.total === undefined ? {} : { total: list.total })}
        empty="No contacts match."
      />
    </section>
  )
}
