/**
 * A small line chart (uPlot). Presentational: `points` are Unix-ms timestamps with values already turned
 * into numbers for drawing only (the numbers shown as text elsewhere stay decimal strings); `format`
 * labels the y axis. uPlot (≈ 20 KB gzip with its CSS) is loaded on first draw, not with the popup (the
 * popup's JS at open stays ≤ 80 KB gzip and the ticket interactive fast: `test/bench/popup.ts`).
 */
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

/** uPlot and its stylesheet, imported once on first use. */
let uplot: Promise<typeof uPlot> | undefined;
const loadUplot = () =>
  (uplot ??= Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([m]) => m.default));

/**
 * A uPlot line chart (`width` × `height` px, default 340 × 140), redrawn when `points` change; nothing drawn without
 * points.
 */
export function LineChart({
  points,
  label,
  format,
  width = 340,
  height = 140,
}: {
  points: { t: number; v: number }[];
  label: string;
  format: (v: number) => string;
  width?: number;
  height?: number;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!ref.current || points.length === 0) return;
    let plot: { destroy: () => void } | undefined;
    let gone = false;
    void loadUplot().then((UPlot) => {
      if (gone || !ref.current) return;
      plot = new UPlot(
        {
          width,
          height,
          legend: { show: false },
          scales: { x: { time: true } },
          axes: [
            { stroke: 'currentColor', grid: { show: false } },
            { stroke: 'currentColor', size: 56, values: (_u: uPlot, vals: number[]) => vals.map(format) },
          ],
          series: [{}, { label, stroke: '#10b981', width: 1.5 }],
        },
        [points.map((p) => p.t / 1000), points.map((p) => p.v)],
        ref.current,
      );
    });
    return () => {
      gone = true;
      plot?.destroy();
    };
  }, [points, width, height]);
  return <div class="chart" ref={ref} role="img" aria-label={label} />;
}
