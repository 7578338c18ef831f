// How the app words numbers: token counts and US dollars, the same on
// every page that shows them (a session's usage, a budget, an owner's
// spend).

export function formatCount(n: bigint | number): string {
  const v = Number(n);
  if (v >= 1_000_000) return `${(v / 1_000_000).toFixed(1)}M`;
  if (v >= 10_000) return `${Math.round(v / 1000)}k`;
  if (v >= 1000) return `${(v / 1000).toFixed(1)}k`;
  return String(v);
}

// formatTokens is a token count in full, its thousands grouped: 38,204.
export function formatTokens(n: bigint | number): string {
  return Number(n).toLocaleString("en-US");
}

// formatUsd words US dollars: cents, or the first digits that count
// below a cent (what a few tokens cost).
export function formatUsd(v: number): string {
  if (v === 0) return "$0.00";
  if (v < 0.0001) return "<$0.0001";
  if (v < 0.01) return `$${v.toPrecision(2).replace(/0+$/, "")}`;
  if (v < 1000) return `$${v.toFixed(2)}`;
  return `$${Math.round(v).toLocaleString("en-US")}`;
}
