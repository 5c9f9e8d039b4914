/**
 * The vendor's webhook signature (vendor facts §2.1, `src/lib/webhook_auth.ts`): HMAC-SHA256 keyed with the secret's
 * UTF-8 bytes over the raw body followed directly by the timestamp's decimal digits, sent as
 * `v=<epoch ms>,d=<64 lowercase hex>`. The vendor SDK's `verify(body, secret, signature)` accepts it while
 * |now - v| <= 5 minutes.
 */
import * as crypto from "node:crypto"

/** @category encoding */
export const sign = (body: string, secret: string, timestamp: number): string =>
  `v=${timestamp},d=${crypto.createHmac("sha256", secret).update(body + String(timestamp), "utf8").digest("hex")}`
