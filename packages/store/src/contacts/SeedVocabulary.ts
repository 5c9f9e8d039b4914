/**
 * What the contact seed (ContactSeed.ts) draws from: names (a few non-ASCII), the area codes and the two bijections
 * that spread phone numbers over them, tags, plans with their shares, and the optional custom fields, so that the
 * data looks like an org's CRM export (postgres-floor.md, Data).
 */
import type { Rng } from "./SeedRandom.ts"

const words = (text: string): ReadonlyArray<string> => text.trim().split(/\s+/)
const list = (text: string): ReadonlyArray<string> => text.trim().split(/\s*,\s*/)

export const FIRST_NAMES = words(`
  James Mary John Patricia Robert Jennifer Michael Linda David Elizabeth William Barbara Richard Susan Joseph
  Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Sandra Mark Margaret
  Donald Ashley Steven Kimberly Andrew Emily Paul Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian
  Melissa George Deborah Timothy Stephanie Ronald Rebecca Jason Sharon Edward Laura Jeffrey Cynthia Ryan
  Dorothy Jacob Amy Gary Kathleen Nicholas Angela Eric Shirley Jonathan Emma Stephen Brenda Larry Pamela
  Justin Nicole Scott Anna Brandon Samantha Benjamin Katherine Samuel Christine Gregory Debra Alexander Rachel
  Patrick Carolyn Frank Janet Raymond Maria Jack Olivia Dennis Heather Jerry Helen Ann Anne Hannah Joanna
  Priya Wei Yuki Aisha Omar Mateo Lucía José Zoë Björn François Łukasz Søren Chloé Jürgen Siobhán Renée Inés
`)

export const LAST_NAMES = words(`
  Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson
  Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis
  Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera
  Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart
  Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim
  Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo
  Sanders Patel Myers Long Ross Foster Jimenez Lovelace Hanson Johansson O'Brien Müller García Ødegaard
  Kowalczyk Nakamura Dubois Šimek Fernández Großmann Çelik Ångström
`)

/** 30 area codes of the North American plan (555 among them, as in fiction and in test data). */
export const AREA_CODES = words(`
  212 213 305 312 404 415 469 503 512 555 602 617 646 702 713 720 786 801 808 813 818 832 857 904 917 919 925
  949 971 978
`)
export const NUMBERS_PER_AREA = 10_000_000
export const NUMBER_SPACE = AREA_CODES.length * NUMBERS_PER_AREA
// Coprime with NUMBER_SPACE (= 3 * 2^8 * 5^8) and below 2^22, so multiplier * index stays an exact double.
export const PHONE_MULTIPLIERS = [2_097_143, 1_299_709, 3_141_593, 2_718_281, 1_618_033, 4_000_037]
// Coprime with 10^7.
export const LOCAL_MULTIPLIER = 7_654_321

export const TAGS = words(`
  customer lead vip newsletter trial churn-risk partner webinar-2025 support beta renewal-due do-not-email
`)

// plan and the cumulative share of contacts up to it: free 45%, starter 30%, pro 17%, enterprise 8%
const PLANS: ReadonlyArray<readonly [string, number]> = [
  ["free", 0.45],
  ["starter", 0.75],
  ["pro", 0.92],
  ["enterprise", 1]
]

const CITIES = list(`
  Springfield, Riverside, Franklin, Greenville, Clinton, Fairview, Salem, Madison, Georgetown, Arlington,
  Ashland, Dover, Oxford, Jackson, Burlington, Manchester, Milton, Newport, Auburn, Dayton, Lexington, Milford,
  Winchester, Hudson, Kingston, Austin, Denver, Boston, Seattle, Portland, Chicago, Phoenix, Houston, Miami,
  Atlanta, São Paulo, Zürich, Kraków, Montréal, Málaga
`)

const COMPANY_WORDS = words(`
  Acme Summit Blue Harbor Pioneer Evergreen Granite Northstar Silver Maple Beacon Cedar Liberty Redwood Atlas
  Horizon Keystone Sterling Apex Golden
`)
const COMPANY_TRADES = words(`
  Dental Roofing Realty Logistics Insurance Plumbing Fitness Legal Auto Solar Clinic Bakery Labs Media
  Holdings
`)
const COMPANY_SUFFIXES = words(`
  Inc LLC Co Group Partners Ltd
`)

const SOURCES = words(`
  web referral import event ads partner cold-call inbound-call
`)

const ACCOUNT_MANAGERS = list(`
  Dana Whitfield, Marco Bellini, Grace Okafor, Hiro Tanaka, Sofia Lindqvist, Ben Carter, Ava Moreno,
  Liam O'Connor, Noor Haddad, Elena Petrova, Tomás Ruiz, Mia Schneider
`)

const LANGUAGES = words(`
  en-US en-US en-US es-ES es-MX fr-FR de-DE pt-BR it-IT nl-NL
`)

export const OPTIONAL_FIELDS = ["city", "company", "source", "account_manager", "language", "lifetime_value"] as const

/** The plan for a uniform draw `u` in [0, 1). */
export const planOf = (u: number): string => PLANS.find(([, upTo]) => u < upTo)![0]

/** A value for one optional custom field. */
export const fieldValue = (name: (typeof OPTIONAL_FIELDS)[number], rng: Rng): string | number => {
  switch (name) {
    case "city":
      return rng.pickSkewed(CITIES)
    case "company":
      return `${rng.pick(COMPANY_WORDS)} ${rng.pick(COMPANY_TRADES)} ${rng.pick(COMPANY_SUFFIXES)}`
    case "source":
      return rng.pickSkewed(SOURCES)
    case "account_manager":
      return rng.pick(ACCOUNT_MANAGERS)
    case "language":
      return rng.pick(LANGUAGES)
    case "lifetime_value":
      return Math.round(50_000 * rng.next() ** 4 * 100) / 100
  }
}
