/** Display formatting shared by the popup and the approval window (pure). */

/** `0x99…A4dc`: first 4 and last 4 characters of an address. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

/** A decimal string with thousands separators, decimals kept as given: `"3120.50"` → `"3,120.50"`. */
export function groupDecimal(s: string): string {
  const neg = s.startsWith('-');
  const [int, frac] = (neg ? s.slice(1) : s).split('.');
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${grouped}${frac !== undefined ? `.${frac}` : ''}`;
}

/** Base units (integer string) of a token with `decimals` as a human amount with at least 2 decimals: `"10000000"`, 6 → `"10.00"`. */
export function formatUnitsMin2(base: string, decimals: number): string {
  const s = base.padStart(decimals + 1, '0');
  const int = s.slice(0, s.length - decimals);
  let frac = s.slice(s.length - decimals).replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return groupDecimal(`${int}.${frac}`);
}
