// The network browser (docs/ui.md "Network browser"): every network of vigil net split
// with the figures of vigil net report (from /api/nets), a response-time histogram with
// the percentile markers, the server sequences (most frequent first; a click filters),
// sorting and filtering, and a virtualised list (only the rows in view are in the page,
// so 100,000 networks scroll as 100 do). A click draws the network (netview.js).
import * as d3 from 'd3';
import { get, getExact } from '../api.js';
import { ns, count, bytes, el } from './format.js';
import { drawNetwork } from './netview.js';

const $ = (id) => document.getElementById(id);
const ROW = 22;
const st = { all: [], rows: [], seq: null, selected: -1, data: null };

function histogram(data) {
  const svg = d3.select('#n-hist');
  svg.selectAll('*').remove();
  const w = $('n-hist').clientWidth || 600, h = 130, m = { l: 40, r: 12, t: 12, b: 24 };
  const v = st.all.map((n) => Math.max(1, n.response_ns));
  const lo = d3.min(v), hi = d3.max(v);
  const log = hi / lo >= 100;
  const x = (log ? d3.scaleLog() : d3.scaleLinear()).domain(lo === hi ? [lo * 0.9, hi * 1.1] : [lo, hi]).range([m.l, w - m.r]).nice();
  const bins = d3.bin().domain(x.domain()).thresholds(log ? d3.range(41).map((i) => x.domain()[0] * Math.pow(x.domain()[1] / x.domain()[0], i / 40)) : 40)(v);
  const y = d3.scaleLinear().domain([0, d3.max(bins, (b) => b.length) || 1]).range([h - m.b, m.t]);
  svg.append('g').selectAll('rect').data(bins).join('rect')
    .attr('x', (b) => x(b.x0) + 0.5).attr('width', (b) => Math.max(1, x(b.x1) - x(b.x0) - 1))
    .attr('y', (b) => y(b.length)).attr('height', (b) => y(0) - y(b.length)).attr('fill', '#7f95c0');
  svg.append('g').attr('transform', `translate(0,${h - m.b})`).call(d3.axisBottom(x).ticks(6).tickFormat((t) => ns(t)));
  svg.append('g').attr('transform', `translate(${m.l},0)`).call(d3.axisLeft(y).ticks(4));
  const r = data.response_ns;
  for (const [name, val, col] of [['p50', r.p50, '#208040'], ['p90', r.p90, '#d08000'], ['p99', r.p99, '#c02020']]) {
    const px = x(Math.max(1, val));
    svg.append('line').attr('class', 'pmark').attr('data-p', name).attr('x1', px).attr('x2', px).attr('y1', m.t).attr('y2', h - m.b).attr('stroke', col).attr('stroke-width', 2).attr('stroke-dasharray', '4,2');
    svg.append('text').attr('x', px + 3).attr('y', m.t + 8).attr('fill', col).text(name);
  }
}

function sequences(data) {
  const box = $('n-seqs');
  box.textContent = '';
  for (const s of data.sequences) {
    const d = el('div', { title: s.servers }, el('b', { text: count(s.networks) }), s.servers || '(none)');
    d.dataset.servers = s.servers;
    d.addEventListener('click', () => {
      st.seq = st.seq === s.servers ? null : s.servers;
      box.querySelectorAll('div').forEach((x) => x.classList.toggle('active', x.dataset.servers === st.seq));
      apply();
    });
    box.append(d);
  }
}

function options(sel, values) {
  for (const v of [...values].sort()) sel.append(el('option', { value: v, text: v }));
}

// The filters and the sort, then the list drawn again.
function apply() {
  const lo = $('n-min').value === '' ? -Infinity : Number($('n-min').value) * 1e6;
  const hi = $('n-max').value === '' ? Infinity : Number($('n-max').value) * 1e6;
  const host = $('n-host').value, prog = $('n-program').value;
  const q = $('n-search').value.trim().toLowerCase();
  const rows = st.all.filter((n) => n.response_ns >= lo && n.response_ns <= hi &&
    (!host || n.hosts.includes(host)) && (!prog || n.programs.includes(prog)) &&
    (st.seq === null || n.servers === st.seq) &&
    (!q || `${n.servers} ${n.hosts.join(' ')} ${n.programs.join(' ')} ${n.input_program}`.toLowerCase().includes(q)));
  const by = $('n-sort').value;
  const key = { 'response-desc': (n) => -n.response_ns, 'response-asc': (n) => n.response_ns, start: (n) => n.start_ns,
    messages: (n) => -n.messages, network: (n) => n.network }[by];
  rows.sort((a, b) => key(a) - key(b) || a.network - b.network);
  st.rows = rows;
  $('n-count').textContent = `${count(rows.length)} of ${count(st.all.length)} networks`;
  $('n-spacer').style.height = `${rows.length * ROW}px`;
  $('n-list').scrollTop = 0;
  drawList();
}

// Only the rows in view (and a few around) are elements of the page: a pool of row
// elements, given the networks in view again as the list scrolls (nothing made or removed
// while scrolling).
const pool = [];
function drawList() {
  const list = $('n-list');
  const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 5);
  const last = Math.min(st.rows.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 5);
  while (pool.length < last - first) {
    const d = el('div', { class: 'n-row' }, ...[0, 1, 2, 3, 4, 5, 6].map(() => el('span')));
    d.addEventListener('click', () => choose(Number(d.dataset.index)));
    list.append(d);
    pool.push(d);
  }
  pool.forEach((d, k) => {
    const i = first + k, n = st.rows[i];
    d.hidden = !n;
    if (!n) return;
    if (d.dataset.network !== String(n.network)) {
      const c = d.children;
      c[0].textContent = n.network;
      c[1].textContent = ns(n.response_ns);
      c[2].textContent = `+${ns(n.start_ns - st.t0)}`;
      c[3].textContent = n.threads;
      c[4].textContent = n.messages;
      c[5].textContent = bytes(n.bytes);
      c[6].textContent = n.servers;
      c[6].title = n.servers;
      d.dataset.index = n.index;
      d.dataset.network = n.network;
    }
    d.style.top = `${i * ROW}px`;
    d.classList.toggle('selected', n.index === st.selected);
  });
}

async function choose(index) {
  st.selected = index;
  for (const r of $('n-list').querySelectorAll('.n-row')) r.classList.toggle('selected', Number(r.dataset.index) === index);
  const g = await getExact('net', { n: index }, ['ts', 'recorded_ts']);
  if (st.selected !== index) return;
  const f = st.all[index];
  $('n-net-title').textContent = `network ${g.network}${g.file ? ` (${g.file})` : ''}: response ${ns(g.response_ns)}, ${f.threads} threads in ${f.processes} processes on ${f.machines} machine${f.machines === 1 ? '' : 's'}, ${f.messages} messages, ${bytes(f.bytes)}`;
  const jump = $('n-timeline');
  if (st.timeline && g.vertices.length) {
    const v = g.vertices[g.input];
    jump.href = timelineHref(g, v, g.response_ns);
    jump.dataset.at = recorded(v);
  }
  drawNetwork($('n-net'), $('n-detail'), g, st.data.clock, st.timeline ? (v, span) => timelineHref(g, v, span) : null);
}

// A vertex's time as its trace recorded it (exact digits): the timeline's clock is the
// recording's, not the corrected one of the networks (docs/net.md).
function recorded(v) {
  return v.recorded_ts_digits ?? v.ts_digits ?? String(v.ts);
}

// index.html at a vertex of the network: the view from a tenth of `span` before it to a
// tenth after its end, a line at it, its thread's row in view (main.js jumpFromHash).
function timelineHref(g, v, span) {
  const at = BigInt(recorded(v)), pad = BigInt(Math.max(1000, Math.round(span / 10)));
  const th = g.threads[v.thread];
  return `index.html#from=${at - pad}&to=${at + BigInt(Math.round(span)) + pad}&at=${at}&pid=${th.pid}&tid=${th.tid}`;
}

export async function setupNets() {
  const data = await get('nets');
  st.data = data;
  const jump = $('n-timeline'), tl = data.timeline || { open: false, why: 'no trace' };
  jump.hidden = false;
  if (tl.open) jump.title = `the timeline of ${tl.traces.join(' ')} at this network (a new tab)`;
  else {
    jump.classList.add('off');
    jump.removeAttribute('href');
    jump.title = `no timeline: ${tl.why}`;
  }
  st.timeline = tl.open;
  st.all = data.networks.map((n, i) => ({ ...n, index: i }));
  st.t0 = Math.min(...st.all.map((n) => n.start_ns));
  $('view-name').textContent = 'network browser';
  $('view-source').textContent = `${data.source} (${data.from === 'folder' ? 'vigil net split' : 'split here'})`;
  const r = data.response_ns;
  $('n-summary').textContent = `${count(r.networks)} networks: response min ${ns(r.min)}, p50 ${ns(r.p50)}, p90 ${ns(r.p90)}, p99 ${ns(r.p99)}, max ${ns(r.max)}, mean ${ns(r.mean)}`;
  histogram(data);
  sequences(data);
  options($('n-host'), new Set(st.all.flatMap((n) => n.hosts)));
  options($('n-program'), new Set(st.all.flatMap((n) => n.programs)));
  for (const id of ['n-sort', 'n-host', 'n-program']) $(id).addEventListener('change', apply);
  for (const id of ['n-min', 'n-max', 'n-search']) $(id).addEventListener('input', apply);
  $('n-filters').addEventListener('submit', (e) => e.preventDefault());
  // scroll events come once a frame: the rows are drawn in it, not a frame later
  $('n-list').addEventListener('scroll', drawList);
  apply();
  window.vigilNets = { state: st, choose };
  if (st.rows.length) await choose(st.rows[0].index);
}
