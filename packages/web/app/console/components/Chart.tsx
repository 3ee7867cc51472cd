/**
 * Charts drawn by uPlot (canvas; small and fast): bars of counts per day or per bucket, and x-y points with
 * optional reference lines (the calibration plot). Each chart is a `figure` with an accessible name and its
 * numbers in a data table for screen readers.
 */
import { useElementSize } from "@mantine/hooks";
import { useEffect, useRef } from "react";
import uPlot from "uplot";

export interface BarSeries {
  kind: "bars";
  /** x values: Unix seconds (time axis) or bucket numbers */
  x: number[];
  y: number[];
  /** x is a time axis in Unix seconds */
  time?: boolean;
  yLabel: string;
  xLabel: string;
}

export interface PointSeries {
  kind: "points";
  x: number[];
  y: number[];
  /** also drawn: y = x (perfect calibration) */
  diagonal?: boolean;
  xLabel: string;
  yLabel: string;
  /** fixed ranges of both axes, e.g. [0, 1] */
  range?: [number, number];
  /** an interval around each y, drawn as a vertical bar (e.g. a 95% interval), and its name in the data table */
  interval?: { low: number[]; high: number[]; label: string };
  /** false: the points alone, not joined by a line (default true) */
  connect?: boolean;
}

/** Bars of `rows`, one a row: at `bar.x(row)` (Unix seconds if `bar.time`), `bar.y(row)` high. */
export function barSeries<R>(
  rows: R[],
  bar: { x: (row: R) => number; y: (row: R) => number; time?: boolean },
  xLabel: string,
  yLabel: string,
): BarSeries {
  return { kind: "bars", time: bar.time, x: rows.map(bar.x), y: rows.map(bar.y), xLabel, yLabel };
}

function options(spec: BarSeries | PointSeries, width: number, height: number): uPlot.Options {
  const axes: uPlot.Axis[] = [{ label: spec.xLabel }, { label: spec.yLabel }];
  if (spec.kind === "bars") {
    const bars = uPlot.paths.bars;
    if (!bars) throw new Error("uPlot was built without bar paths");
    return {
      width,
      height,
      legend: { show: false },
      cursor: { show: false },
      scales: {
        // buckets (not days) are whole numbers: half a bucket of room on each side
        x: spec.time ? { time: true } : { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
      },
      axes: spec.time ? axes : [{ ...axes[0], incrs: [1, 2, 5, 10, 20, 50, 100] }, axes[1] as uPlot.Axis],
      series: [{}, { label: spec.yLabel, fill: "rgba(34, 139, 230, 0.6)", stroke: "rgb(28, 126, 214)", paths: bars({ size: [0.7, 40] }) }],
    };
  }
  const range = spec.range;
  const series: uPlot.Series[] = [
    {},
    {
      label: spec.yLabel,
      stroke: "rgb(28, 126, 214)",
      width: 2,
      spanGaps: true,
      points: { show: true, size: 8, fill: "rgb(28, 126, 214)" },
      ...(spec.connect === false ? { paths: () => null } : {}),
    },
  ];
  if (spec.diagonal) series.push({ label: "perfect calibration", stroke: "rgba(0, 0, 0, 0.35)", dash: [6, 4], points: { show: false } });
  return {
    width,
    height,
    legend: { show: false },
    cursor: { show: false },
    scales: range
      ? { x: { time: false, range: () => range }, y: { range: () => range } }
      : spec.interval
        ? { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] }, y: { range: intervalRange(spec.interval) } }
        : { x: { time: false } },
    axes,
    series,
    ...(spec.interval ? { hooks: { draw: [drawIntervals(spec)] } } : {}),
  };
}

/** The y range that holds every interval, with a tenth of room on each side. */
function intervalRange(interval: { low: number[]; high: number[] }): uPlot.Range.Function {
  return () => {
    const lo = Math.min(...interval.low);
    const hi = Math.max(...interval.high);
    const pad = (hi - lo || 1) / 10;
    return [lo - pad, hi + pad];
  };
}

/** A draw hook: each point's interval as a vertical bar with end caps, under the points' colour. */
function drawIntervals(spec: PointSeries): (u: uPlot) => void {
  return (u) => {
    const { low, high } = spec.interval ?? { low: [], high: [] };
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "rgb(28, 126, 214)";
    ctx.lineWidth = 2 * uPlot.pxRatio;
    const cap = 5 * uPlot.pxRatio;
    spec.x.forEach((x, i) => {
      const cx = u.valToPos(x, "x", true);
      const y0 = u.valToPos(low[i] ?? 0, "y", true);
      const y1 = u.valToPos(high[i] ?? 0, "y", true);
      ctx.beginPath();
      ctx.moveTo(cx, y0);
      ctx.lineTo(cx, y1);
      ctx.moveTo(cx - cap, y0);
      ctx.lineTo(cx + cap, y0);
      ctx.moveTo(cx - cap, y1);
      ctx.lineTo(cx + cap, y1);
      ctx.stroke();
    });
    ctx.restore();
  };
}

/**
 * The aligned data of a chart. With a diagonal, x also holds the ends of the range (or of the data), so the
 * line y = x spans the whole plot however few points there are; the points' series is null there.
 */
function data(spec: BarSeries | PointSeries): uPlot.AlignedData {
  if (spec.kind === "points" && spec.diagonal) {
    const [lo, hi] = spec.range ?? [Math.min(...spec.x, 0), Math.max(...spec.x, 1)];
    const xs = [...new Set([lo, ...spec.x, hi])].sort((a, b) => a - b);
    const yAt = new Map(spec.x.map((x, i) => [x, spec.y[i] ?? null]));
    return [xs, xs.map((x) => yAt.get(x) ?? null), xs];
  }
  return [spec.x, spec.y];
}

/** A chart whose width follows its container. `title` is its accessible name and caption. */
export function Chart({ spec, title, height = 220 }: { spec: BarSeries | PointSeries; title: string; height?: number }) {
  const { ref, width } = useElementSize();
  const canvasHolder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = canvasHolder.current;
    if (!el || width <= 0) return;
    const plot = new uPlot(options(spec, Math.floor(width), height), data(spec), el);
    return () => plot.destroy();
  }, [spec, width, height]);
  return (
    <figure className="chart" ref={ref}>
      <figcaption>{title}</figcaption>
      <div ref={canvasHolder} role="img" aria-label={`${title}: chart; the numbers are in the table that follows`} />
      <table className="visually-hidden">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">{spec.xLabel}</th>
            <th scope="col">{spec.yLabel}</th>
            {spec.kind === "points" && spec.interval && <th scope="col">{spec.interval.label}</th>}
          </tr>
        </thead>
        <tbody>
          {spec.x.map((x, i) => (
            <tr key={`${x}`}>
              <td>{spec.kind === "bars" && spec.time ? new Date(x * 1000).toISOString().slice(0, 10) : x}</td>
              <td>{spec.y[i]}</td>
              {spec.kind === "points" && spec.interval && (
                <td>
                  {spec.interval.low[i]} to {spec.interval.high[i]}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
