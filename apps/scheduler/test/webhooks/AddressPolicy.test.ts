import { assert, describe, it } from "@effect/vitest"
import { refusal } from "../../src/webhooks/AddressPolicy.ts"

const refused = (address: string) => assert.isDefined(refusal(address), `${address} should be refused`)
const allowed = (address: string) => assert.isUndefined(refusal(address), `${address} should be allowed`)

describe("AddressPolicy", () => {
  it("refuses IPv4 loopback, private, CGNAT, link-local and metadata addresses", () => {
    for (
      const a of [
        "127.0.0.1",
        "127.255.255.254",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "100.64.0.1",
        "100.100.100.200", // Alibaba metadata (CGNAT range)
        "169.254.169.254", // AWS/GCP/Azure metadata
        "169.254.0.1",
        "0.0.0.0",
        "192.0.0.192", // Oracle metadata
        "198.18.0.1",
        "224.0.0.1",
        "255.255.255.255"
      ]
    ) refused(a)
  })

  it("allows public IPv4, including the neighbours of the refused ranges", () => {
    for (
      const a of ["8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "11.0.0.1"]
    ) {
      allowed(a)
    }
  })

  it("refuses IPv6 loopback, unspecified, link-local, unique-local (AWS metadata) and multicast", () => {
    for (const a of ["::1", "::", "fe80::1", "fe80::1%eth0", "fc00::1", "fd00:ec2::254", "fec0::1", "ff02::1"]) {
      refused(a)
    }
  })

  it("judges IPv4 carried in IPv6 (mapped, compatible, NAT64, 6to4) by the IPv4 address", () => {
    for (
      const a of [
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "::ffff:169.254.169.254",
        "::ffff:a9fe:a9fe",
        "::ffff:10.0.0.1",
        "::127.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b::10.1.2.3",
        "2002:7f00:0001::1",
        "2002:c0a8:0101::"
      ]
    ) refused(a)
    for (const a of ["::ffff:8.8.8.8", "64:ff9b::808:808", "2002:0808:0808::1"]) allowed(a)
  })

  it("allows public IPv6 and refuses what is not an address", () => {
    allowed("2606:4700:4700::1111")
    allowed("2001:4860:4860::8888")
    refused("not-an-ip")
    refused("")
  })
})
