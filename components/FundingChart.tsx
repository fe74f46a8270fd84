/**
 * Funding-rate history as a small line chart (uPlot). Presentational: takes `points` (Unix-ms
 * timestamps and decimal-string rates) and renders them as percentages.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export function FundingChart({ points, width = 340, height = 140 }: { points: { timestamp: number; funding_rate: string }[]; width?: number; height?: number }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!ref.current || points.length === 0) return;
    const xs = points.map((p) => p.timestamp / 1000);
    const ys = points.map((p) => Number(p.funding_rate) * 100);
    const plot = new uPlot(
      {
        width,
        height,
        legend: { show: false },
        scales: { x: { time: true } },
        axes: [{ stroke: 'currentColor', grid: { show: false } }, { stroke: 'currentColor', size: 48, values: (_u, vals) => vals.map((v) => `${v.toFixed(3)}%`) }],
        series: [{}, { label: 'funding', stroke: '#10b981', width: 1.5 }],
      },
      [xs, ys],
      ref.current,
    );
    return () => plot.destroy();
  }, [points, width, height]);
  return <div class="chart" ref={ref} aria-label="Funding rate history" />;
}
