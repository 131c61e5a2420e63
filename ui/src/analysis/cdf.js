// CDFs drawn with d3: one step line per run over the same axes (a log axis when the values
// span two decades or more), and on hover the value under the pointer with each run's
// fraction at or below it (the quantile read off both curves).
import * as d3 from 'd3';
import { ns } from './format.js';

// series: [{name, color, points: [[value_ns, fraction <= value], ...] sorted}]
export function drawCdf(parent, series, { width = 520, height = 200, title = '' } = {}) {
  const m = { l: 44, r: 12, t: 16, b: 30 };
  const all = series.flatMap((s) => s.points.map((p) => p[0]));
  const svg = d3.select(parent).append('svg').attr('width', width).attr('height', height).attr('class', 'cdf');
  if (!all.length) {
    svg.append('text').attr('x', 10).attr('y', 20).text('no timed values');
    return svg.node();
  }
  let lo = d3.min(all), hi = d3.max(all);
  const log = lo > 0 && hi / lo >= 100;
  if (lo === hi) { lo = lo > 0 ? lo / 2 : 0; hi = hi > 0 ? hi * 1.5 : 1; }
  const x = (log ? d3.scaleLog() : d3.scaleLinear()).domain([log ? lo * 0.9 : Math.min(0, lo), hi * 1.05]).range([m.l, width - m.r]);
  const y = d3.scaleLinear().domain([0, 1]).range([height - m.b, m.t]);
  svg.append('g').attr('transform', `translate(0,${height - m.b})`)
    .call(d3.axisBottom(x).ticks(log ? 5 : 6, log ? '~s' : undefined).tickFormat((v) => ns(v)));
  svg.append('g').attr('transform', `translate(${m.l},0)`).call(d3.axisLeft(y).ticks(5).tickFormat(d3.format('.0%')));
  if (title) svg.append('text').attr('x', m.l).attr('y', 11).text(title);
  const x0 = x.domain()[0], x1 = x.domain()[1];
  for (const s of series) {
    if (!s.points.length) continue;
    // steps: 0 up to the first value, then each value's fraction until the next one
    const pts = [[x0, 0]];
    for (const [v, f] of s.points) { pts.push([v, pts[pts.length - 1][1]]); pts.push([v, f]); }
    pts.push([x1, pts[pts.length - 1][1]]);
    svg.append('path').attr('d', d3.line().x((p) => x(p[0])).y((p) => y(p[1]))(pts))
      .attr('fill', 'none').attr('stroke', s.color).attr('stroke-width', 2).attr('data-run', s.name);
  }
  const rule = svg.append('line').attr('y1', m.t).attr('y2', height - m.b).attr('stroke', '#999').attr('stroke-dasharray', '3,3').style('display', 'none');
  const readout = svg.append('text').attr('class', 'readout').attr('x', width - m.r).attr('y', m.t + 2).attr('text-anchor', 'end');
  const frac = (s, v) => {
    let f = 0;
    for (const [pv, pf] of s.points) { if (pv <= v) f = pf; else break; }
    return f;
  };
  svg.on('mousemove', (ev) => {
    const [px] = d3.pointer(ev);
    if (px < m.l || px > width - m.r) return;
    const v = x.invert(px);
    rule.attr('x1', px).attr('x2', px).style('display', null);
    readout.text(`${ns(v)}: ` + series.map((s) => `${s.name} ${(100 * frac(s, v)).toFixed(1)}%`).join(', '));
  }).on('mouseleave', () => { rule.style('display', 'none'); readout.text(''); });
  return svg.node();
}
