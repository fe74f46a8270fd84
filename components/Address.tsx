/**
 * An address shown the way traders read it: `0x99…A4dc` (first 4 and last 4 hex characters), with the
 * full checksummed address in the title. Presentational: no messaging, no storage.
 */
import { shortAddress } from '../lib/format';

export { shortAddress };

/** `<code>` with the short form and the full address as its title. */
export function Address({ address }: { address: string }) {
  return (
    <code class="address" title={address}>
      {shortAddress(address)}
    </code>
  );
}
