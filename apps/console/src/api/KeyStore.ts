/**
 * Where the API key lives: the tab's sessionStorage (decision 0800: "the key kept in the tab's session storage, never in
 * a URL or a log"). It goes when the tab closes, and no other tab sees it.
 */
const NAME = "svc.console.apiKey"

export const readKey = (): string | undefined => sessionStorage.getItem(NAME) ?? undefined

export const saveKey = (key: string): void => sessionStorage.setItem(NAME, key)

export const forgetKey = (): void => sessionStorage.removeItem(NAME)
