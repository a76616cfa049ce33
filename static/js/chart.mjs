// Downloads per day as a small bar chart: SVG built node by node (no markup strings, and no
// inline style, which the Content-Security-Policy forbids).

import {svg} from './dom.mjs';

const DAY_MS = 86_400_000;

// The last `span` days up to today (UTC), each with its count (0 when absent).
export function lastDays(days, span = 30, today = new Date()) {
  const counts = new Map(days.map((day) => [day.day, day.count]));
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const out = [];
  for (let i = span - 1; i >= 0; i -= 1) {
    const day = new Date(end - i * DAY_MS).toISOString().slice(0, 10);
    out.push({day, count: counts.get(day) ?? 0});
  }
  return out;
}

export function downloadChart(days) {
  const width = 300;
  const height = 80;
  const gap = 2;
  const barWidth = width / days.length - gap;
  const most = Math.max(1, ...days.map((day) => day.count));
  const chart = svg('svg', {viewBox: `0 0 ${width} ${height + 14}`, class: 'chart', role: 'img',
    'aria-label': `downloads per day, last ${days.length} days`});
  days.forEach((day, index) => {
    const barHeight = day.count === 0 ? 1 : Math.max(2, (day.count / most) * height);
    chart.append(svg('rect', {x: index * (barWidth + gap), y: height - barHeight, width: barWidth, height: barHeight,
      class: day.count === 0 ? 'bar bar-zero' : 'bar'}, svg('title', null, `${day.day}: ${day.count}`)));
  });
  chart.append(
    svg('text', {x: 0, y: height + 12, class: 'axis'}, days[0].day),
    svg('text', {x: width, y: height + 12, class: 'axis', 'text-anchor': 'end'}, days[days.length - 1].day));
  return chart;
}
