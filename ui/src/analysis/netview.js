// One interaction network drawn as the seed's browser drew it: a column per thread, grouped
// by machine and process, time running down (the clock-corrected times of vigil net split),
// the thread's life between its events shaded (running: a bar; waiting for a message: a
// thin line), messages as arrows labelled with their bytes, machines coloured. Wheel zooms,
// drag pans; a click on a message shows its endpoints, bytes and times, a click on a
// column head its thread.
import * as d3 from 'd3';
import { ns, bytes, el } from './format.js';

const COL = 120, HEAD = 58;
const HOST_COLOURS = ['#3b6fb6', '#c2562d', '#3f8f4e', '#8a4fb0', '#b08a1e', '#2b8c8c', '#b03c6e', '#5f6b7a'];

function table(box, title, pairs) {
  box.textContent = '';
  box.append(el('h4', { text: title }));
  const t = el('table');
  for (const [k, v] of pairs) { const tr = t.insertRow(); tr.dataset.key = k; tr.insertCell().textContent = k; tr.insertCell().textContent = v; }
  box.append(t);
}

// A byte range of a stream, [first, end) with its length: offsets as vigil net split wrote
// them (a send's or a receive's, or the part of them a message carries).
function range(off, len) {
  if (off === undefined || off === null) return `${len} (no offsets: an older vigil net split)`;
  return `${off}–${off + len} (${len})`;
}

function clockOf(clock, host) {
  const h = clock && clock.hosts ? clock.hosts.find((x) => x.host === host) : null;
  if (!h) return 'no correction (one host)';
  if (h.status === 'reference') return 'the reference clock';
  const lo = h.lo_ns, hi = h.hi_ns;
  const b = lo === null || hi === null || lo === undefined || hi === undefined ? 'one bound only' : `offset in [${ns(lo)}, ${ns(hi)}]`;
  return `${h.status}: corrected by ${ns(h.offset_ns)}, ${b}`;
}

// jumpHref(vertex, span_ns): the timeline's address at that vertex, or null (no timeline).
export function drawNetwork(svgEl, box, g, clock, jumpHref = null) {
  const svg = d3.select(svgEl);
  svg.selectAll('*').remove();
  box.textContent = '';
  // columns: machines in order of first appearance, then processes, then threads
  const hosts = [...new Set(g.threads.map((t) => t.host))];
  const order = g.threads.map((t, i) => i).sort((a, b) => {
    const x = g.threads[a], y = g.threads[b];
    return hosts.indexOf(x.host) - hosts.indexOf(y.host) || x.pid - y.pid || x.tid - y.tid;
  });
  const col = new Map(order.map((t, i) => [t, i]));
  const colour = (host) => HOST_COLOURS[hosts.indexOf(host) % HOST_COLOURS.length];
  const H = Math.max(300, (svgEl.clientHeight || 500) - HEAD - 20);
  const t0 = g.start_ns, t1 = Math.max(g.end_ns, t0 + 1);
  const y = d3.scaleLinear().domain([t0, t1]).range([HEAD + 10, HEAD + 10 + H]);
  const cx = (t) => 60 + col.get(t) * COL + COL / 2;
  const root = svg.append('g');
  // waiting: a thread edge that ends in a receive of a message from another thread
  const recvOfMsg = new Set(g.edges.filter((e) => e.kind === 'message' && g.vertices[e.from].thread !== g.vertices[e.to].thread).map((e) => e.to));
  // heads: machine band, process, thread
  const heads = root.append('g');
  order.forEach((t) => {
    const th = g.threads[t], x = cx(t);
    const h = heads.append('g').attr('class', 'col-head').attr('data-thread', t);
    h.append('rect').attr('x', x - COL / 2 + 2).attr('y', 2).attr('width', COL - 4).attr('height', HEAD - 6).attr('rx', 3)
      .attr('fill', colour(th.host)).attr('opacity', 0.15).attr('stroke', colour(th.host));
    h.append('text').attr('x', x).attr('y', 15).attr('text-anchor', 'middle').attr('font-weight', 600).attr('fill', colour(th.host)).text(th.host);
    h.append('text').attr('x', x).attr('y', 29).attr('text-anchor', 'middle').text(`${th.program} [${th.pid}]`.slice(0, 20));
    h.append('text').attr('x', x).attr('y', 43).attr('text-anchor', 'middle').attr('fill', '#667').text(`tid ${th.tid}${th.name ? ' ' + th.name : ''}`.slice(0, 20));
    h.on('click', () => {
      let run = 0, wait = 0;
      for (const e of g.edges) if (e.kind === 'thread' && g.vertices[e.from].thread === t) {
        const d = g.vertices[e.to].ts - g.vertices[e.from].ts;
        if (recvOfMsg.has(e.to)) wait += d; else run += d;
      }
      table(box, `thread ${th.tid}`, [['host', th.host], ['process', `${th.program} [${th.pid}]`], ['program', th.program],
        ['thread', `${th.tid}${th.name ? ` (${th.name})` : ''}`], ['running', ns(run)], ['waiting', ns(wait)], ['clock', clockOf(clock, th.host)]]);
    });
  });
  // time axis
  root.append('g').attr('transform', 'translate(56,0)').call(d3.axisLeft(y).ticks(8).tickFormat((v) => `+${ns(v - t0)}`));
  const body = root.append('g');
  for (const e of g.edges) {
    if (e.kind !== 'thread') continue;
    const a = g.vertices[e.from], b = g.vertices[e.to], x = cx(a.thread);
    if (recvOfMsg.has(e.to))
      body.append('line').attr('class', 'waiting').attr('x1', x).attr('x2', x).attr('y1', y(a.ts)).attr('y2', y(b.ts)).attr('stroke', '#aab').attr('stroke-dasharray', '2,2');
    else
      body.append('rect').attr('class', 'running').attr('x', x - 4).attr('width', 8).attr('y', y(a.ts)).attr('height', Math.max(1, y(b.ts) - y(a.ts)))
        .attr('fill', colour(g.threads[a.thread].host)).attr('opacity', 0.45);
  }
  for (const e of g.edges) {
    if (e.kind !== 'spawn') continue;
    const a = g.vertices[e.from], b = g.vertices[e.to];
    body.append('line').attr('class', 'spawn').attr('x1', cx(a.thread)).attr('x2', cx(b.thread)).attr('y1', y(a.ts)).attr('y2', y(b.ts)).attr('stroke', '#889').attr('stroke-dasharray', '1,3');
  }
  for (const v of g.vertices)
    body.append('circle').attr('cx', cx(v.thread)).attr('cy', y(v.ts)).attr('r', v.input ? 5 : 2.5).attr('fill', v.input ? '#e0a000' : '#334').append('title').text(`${v.kind} +${ns(v.ts - t0)}`);
  svg.append('defs').append('marker').attr('id', 'arrow').attr('viewBox', '0 0 10 10').attr('refX', 9).attr('refY', 5)
    .attr('markerWidth', 7).attr('markerHeight', 7).attr('orient', 'auto-start-reverse').append('path').attr('d', 'M0,0L10,5L0,10z').attr('fill', '#333');
  const msgs = body.append('g');
  const labelled = new Map();
  g.edges.forEach((e, i) => {
    if (e.kind !== 'message') return;
    const s = g.vertices[e.from], r = g.vertices[e.to];
    const x1 = cx(s.thread), x2 = cx(r.thread), y1 = y(s.ts), y2 = y(r.ts);
    const m = msgs.append('g').attr('class', 'msg').attr('data-edge', i).attr('data-bytes', e.bytes);
    m.append('line').attr('x1', x1).attr('y1', y1).attr('x2', x2).attr('y2', y2).attr('stroke', e.cross_host ? '#a03020' : '#333').attr('stroke-width', 1.3).attr('marker-end', 'url(#arrow)');
    // a wide transparent line takes the clicks
    m.append('line').attr('x1', x1).attr('y1', y1).attr('x2', x2).attr('y2', y2).attr('stroke', 'transparent').attr('stroke-width', 9);
    // pieces of one send read apart share their middle: their labels are stacked
    const spot = `${Math.round((x1 + x2) / 2)},${Math.round((y1 + y2) / 8)}`;
    const k = labelled.get(spot) || 0;
    labelled.set(spot, k + 1);
    m.append('text').attr('x', (x1 + x2) / 2).attr('y', (y1 + y2) / 2 - 3 - 12 * k).attr('text-anchor', 'middle').attr('fill', '#223').text(bytes(e.bytes));
    m.on('click', (ev) => {
      ev.stopPropagation();
      msgs.selectAll('.msg').classed('selected', false);
      m.classed('selected', true);
      const ts = g.threads[s.thread], tr = g.threads[r.thread];
      table(box, `message: ${bytes(e.bytes)}`, [
        ['bytes', String(e.bytes)],
        ['from', `${ts.host} / ${ts.program} [${ts.pid}] tid ${ts.tid}`], ['to', `${tr.host} / ${tr.program} [${tr.pid}] tid ${tr.tid}`],
        ['sender\'s endpoints', s.local ? `${s.local} → ${s.remote}` : '—'], ['receiver\'s endpoints', r.local ? `${r.local} ← ${r.remote}` : '—'],
        ['sent bytes', range(e.send_off, e.bytes)], ['received bytes', range(e.recv_off, e.bytes)],
        ['send', `+${ns(s.ts - t0)} (${s.ts_digits ?? s.ts} ns), bytes ${range(s.off, s.len)} written`],
        ['receive', `+${ns(r.ts - t0)} (${r.ts_digits ?? r.ts} ns), bytes ${range(r.off, r.len)} read`],
        ['in flight', ns(r.ts - s.ts)], ['between machines', e.cross_host ? `yes; clocks: ${ts.host} ${clockOf(clock, ts.host)}; ${tr.host} ${clockOf(clock, tr.host)}` : 'no'],
      ]);
      if (jumpHref) box.append(el('a', { class: 'jump', id: 'n-msg-timeline', href: jumpHref(s, Math.max(1, r.ts - s.ts)), target: 'vigil-timeline', text: 'the send in the timeline ↗' }));
    });
  });
  const zoom = d3.zoom().scaleExtent([0.3, 200]).on('zoom', (ev) => root.attr('transform', ev.transform));
  svg.call(zoom).on('dblclick.zoom', null);
  document.getElementById('n-reset').onclick = () => svg.call(zoom.transform, d3.zoomIdentity);
}
