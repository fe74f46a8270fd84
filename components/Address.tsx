/**
 * An address shown the way traders read it: `0x99…A4dc` (first 4 and last 4 hex characters), with the
 * full checksummed address in the title. Presentational: no messaging, no storage.
 */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

export function Address({ address }: { address: string }) {
  return (
    <code class="address" title={address}>
      {shortAddress(address)}
    </code>
  );
}
