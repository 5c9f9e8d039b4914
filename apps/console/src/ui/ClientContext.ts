import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { Client } from "../api/Client.ts"

export const ClientContext = createContext<Client | undefined>(undefined)

export const useClient = (): Client => {
  const client = useContext(ClientContext)
  if (client === undefined) throw new Error("the console's pages need the API client")
  return client
}
