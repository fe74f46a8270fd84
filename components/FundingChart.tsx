/**
 * Funding-rate history as a small line chart. Presentational: takes `points` (Unix-ms timestamps and
 * decimal-string rates) and renders them as percentages.
 */
import { LineChart } from './LineChart';

/** The chart of `points` (rates as fractions, drawn in percent). */
export function FundingChart({
  points,
  width,
  height,
}: {
  points: { timestamp: number; funding_rate: string }[];
  width?: number;
  height?: number;
}) {
  return (
    <LineChart
      points={points.map((p) => ({ t: p.timestamp, v: Number(p.funding_rate) * 100 }))}
      label="Funding rate history"
      format={(v) => `${v.toFixed(3)}%`}
      {...(width === undefined ? {} : { width })}
      {...(height === undefined ? {} : { height })}
    />
  );
}
