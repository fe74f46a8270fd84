/**
 * A small line chart (uPlot). Presentational: `points` are Unix-ms timestamps with values already
 * turned into numbers for drawing only (the numbers shown as text elsewhere stay decimal strings);
 * `format` labels the y axis.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** A uPlot line chart (`width` × `height` px, default 340 × 140), redrawn when `points` change; nothing drawn without points. */
export function LineChart({ points, label, format, width = 340, height = 140 }: { points: { t: number; v: number }[]; label: string; format: (v: number) => string; width?: number; height?: number }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!ref.current || points.length === 0) return;
    const plot = new uPlot(
      {
        width,
        height,
        legend: { show: false },
        scales: { x: { time: true } },
        axes: [{ stroke: 'currentColor', grid: { show: false } }, { stroke: 'currentColor', size: 56, values: (_u, vals) => vals.map(format) }],
        series: [{}, { label, stroke: '#10b981', width: 1.5 }],
      },
      [points.map((p) => p.t / 1000), points.map((p) => p.v)],
      ref.current,
    );
    return () => plot.destroy();
  }, [points, width, height]);
  return <div class="chart" ref={ref} role="img" aria-label={label} />;
}
