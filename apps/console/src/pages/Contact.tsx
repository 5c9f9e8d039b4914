/** One contact (GET /get-contact) and its conversations (GET /list-contact-conversations), newest first. */
import { useEffect, useState } from "preact/hooks"
import type { Contact, Conversation, Page } from "../api/Types.ts"
import { count, dateTime } from "../Format.ts"
import { href } from "../Router.ts"
import { timingColumns } from "../ui/CallColumns.tsx"
import { useClient } from "../ui/ClientContext.ts"
import { ErrorNote, Fields, Json } from "../ui/Common.tsx"
import { usePaged } from "../ui/Paged.ts"
import { type Column, VirtualTable } from "../ui/VirtualTable.tsx"

export const ContactPage = (props: { readonly id: string }) => {
  const client = useClient()
  const [contact, setContact] = useState<Contact | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => {
    client.get<Contact>(`/get-contact/${encodeURIComponent(props.id)}`).then(
      setContact,
      (e: Error) => setError(e.message)
    )
  }, [props.id])
  const conversations = usePaged(
    (key) =>
      client.get<Page<Conversation>>(
        `/list-contact-conversations/${encodeURIComponent(props.id)}?limit=100${
          key === undefined ? "" : `&pagination_key=${encodeURIComponent(key)}`
        }`
      ),
    [props.id]
  )
  const columns: ReadonlyArray<Column<Conversation>> = [
    {
      header: "Conversation",
      width: "minmax(10rem, 2fr)",
      render: (c) => c.call_id === undefined ? c.chat_id ?? "" : <a href={href.call(c.call_id)}>{c.call_id}</a>
    },
    ...timingColumns<Conversation>({ startedOptional: false }),
    {
      header: "Summary",
      width: "minmax(10rem, 3fr)",
      optional: true,
      render: (c) => <span title={c.summary ?? ""}>{c.summary ?? ""}</span>
    }
  ]
  const fullName = contact === undefined
    ? props.id
    : [contact.first_name, contact.last_name].filter((p) => p !== undefined && p !== "").join(" ") || contact.contact_id
  return (
    <section aria-labelledby="contact-title">
      <p class="crumbs">
        <a href={href.contacts()}>Contacts</a> /
      </p>
      <h1 id="contact-title">{fullName}</h1>
      <ErrorNote error={error} />
      {contact === undefined ? null : (
        <>
          <Fields
            rows={[
              ["Phone", contact.phone_number],
              ["Id", contact.contact_id],
              ["External id", contact.external_id ?? "—"],
              ["Do not call", contact.do_not_call ? "yes" : "no"],
              ["Tags", contact.contact_tags.join(", ") || "—"],
              ["Conversations", count(contact.conversation_count)],
              ["Created", dateTime(contact.created_timestamp)]
            ]}
          />
          {Object.keys(contact.custom_fields).length === 0
            ? null
            : <Json value={contact.custom_fields} label="Custom fields" />}
        </>
      )}
      <h2>Conversations</h2>
      <ErrorNote error={conversations.error} />
      <VirtualTable
        label="Conversations"
        columns={columns}
        rows={conversations.rows}
        rowKey={(c) => c.call_id ?? c.chat_id ?? ""}
        hasMore={conversations.hasMore}
        loading={conversations.loading}
        loadMore={conversations.loadMore}
        empty="No conversations."
      />
    </section>
  )
}
