// The model workbench (docs/ui.md "Model workbench"): vigil diff's three reports as ranked,
// filterable tables (the rows are the engine's: /api/model/diff is vigil diff --format
// json), the transition graph of both runs (cytoscape.js, compound CoSE layout of
// cose-bilkent, events grouped by source file), brushing and linking between them, an
// edge's transition-time CDFs in both runs and the path CDF of vigil cdf between two events.
import cytoscape from 'cytoscape';
import coseBilkent from 'cytoscape-cose-bilkent';
import { get } from '../api.js';
import { drawCdf } from './cdf.js';
import { ns, pct, count, el } from './format.js';

cytoscape.use(coseBilkent);

const $ = (id) => document.getElementById(id);
const BASE = '#2160c4', OTHER = '#e07020';
// a graph with more edges than this draws the changed ones (buildGraph)
const BIG_EDGES = 2000, RANKED_SHOWN = 200;

const state = {
  info: null, graph: null, diff: null, report: 'transitions', cy: null,
  selected: null, // {kind: 'row'|'node'|'edge', ...}
  anchor: null, // the node chosen first (shift-click another: the path CDF)
  layoutMs: null,
};

function nodeLabel(id) { return state.graph.nodes[id].label; }
function edgeLabel(id) {
  const e = state.graph.edges[id];
  return `${nodeLabel(e.from)} → ${nodeLabel(e.to)}`;
}

// The columns of each report and the cells of one of its rows.
const REPORTS = {
  events: {
    head: ['#', 'change', 'baseline', 'other', 'event'],
    cells: (r) => [r.rank, [`${r.difference >= 0 ? '+' : ''}${(100 * r.difference).toFixed(3)}%`, r.difference > 0 ? 'up' : 'down'],
      `${pct(r.share_baseline)} (${count(r.count_baseline)})`, `${pct(r.share_other)} (${count(r.count_other)})`, nodeLabel(r.node)],
    text: (r) => searchText([r.node]),
  },
  transitions: {
    head: ['#', 'ratio', 'baseline P (n/out)', 'other P (n/out)', 'transition'],
    cells: (r) => [r.rank, [`×${r.ratio.toPrecision(4)}`, r.count_other / r.out_other > r.count_baseline / r.out_baseline ? 'up' : 'down'],
      `${(r.count_baseline / r.out_baseline).toFixed(4)} (${count(r.count_baseline)}/${count(r.out_baseline)})`,
      `${(r.count_other / r.out_other).toFixed(4)} (${count(r.count_other)}/${count(r.out_other)})`, edgeLabel(r.edge)],
    text: (r) => searchText(ends(r.edge)),
  },
  times: {
    head: ['#', 'EMD', 'p50 baseline → other', 'p99 baseline → other', 'timed', 'transition'],
    cells: (r) => [r.rank, [ns(r.emd_ns), r.mean_other_ns > r.mean_baseline_ns ? 'up' : 'down'],
      `${ns(r.p50_baseline_ns)} → ${ns(r.p50_other_ns)}`, `${ns(r.p99_baseline_ns)} → ${ns(r.p99_other_ns)}`,
      `${count(r.timed_baseline)}/${count(r.timed_other)}`, edgeLabel(r.edge)],
    text: (r) => searchText(ends(r.edge)),
  },
};

function ends(edge) {
  const e = state.graph.edges[edge];
  return [e.from, e.to];
}

function searchText(nodes) {
  return nodes.map((n) => { const x = state.graph.nodes[n]; return `${x.label} ${x.site} ${x.fmt} ${x.name || ''}`; }).join(' ').toLowerCase();
}

function renderTable() {
  const rep = REPORTS[state.report];
  const rows = state.diff[state.report];
  const table = $('m-table');
  table.tHead.textContent = '';
  const hr = table.tHead.insertRow();
  for (const h of rep.head) hr.append(el('th', { text: h }));
  const body = table.tBodies[0];
  body.textContent = '';
  const q = $('m-search').value.trim().toLowerCase();
  const top = Number($('m-top').value) || 0;
  let shown = 0, matched = 0;
  for (const r of rows) {
    if (q && !rep.text(r).includes(q)) continue;
    matched++;
    if (top && shown >= top) continue;
    const tr = body.insertRow();
    tr.dataset.rank = r.rank;
    if (r.node !== undefined) tr.dataset.node = r.node;
    if (r.edge !== undefined) tr.dataset.edge = r.edge;
    rep.cells(r).forEach((c, i) => {
      const td = tr.insertCell();
      if (Array.isArray(c)) { td.textContent = c[0]; td.className = `num ${c[1]}`; } else td.textContent = c;
      if (i === rep.head.length - 1) td.className = 'what';
      else if (i > 0 && !Array.isArray(c)) td.className = 'num';
    });
    tr.addEventListener('click', () => chooseRow(r, tr));
    shown++;
  }
  const d = state.diff;
  const below = state.report === 'transitions' ? `; ${d.transitions_below_support} below the support of ${d.min_support}`
    : state.report === 'times' ? `; ${d.times_below_support} with fewer than ${d.min_support} timed values` : '';
  $('m-summary').textContent = `${shown} of ${rows.length} rows shown${q ? ` (${matched} match “${q}”)` : ''}${below}. ` +
    `baseline ${d.baseline.path}: ${count(d.baseline.events)} events of ${d.baseline.types} types; ` +
    `other ${d.other.path}: ${count(d.other.events)} events of ${d.other.types} types; ${d.common_events} in common.`;
  markLinked();
}

// ---- the graph ----

function groupOf(site) {
  if (site.startsWith('sensor:')) return 'sensors';
  const plus = site.lastIndexOf('+0x');
  if (plus > 0) return site.slice(0, plus);
  const colon = site.lastIndexOf(':');
  return colon > 0 ? site.slice(0, colon) : site;
}

function buildGraph() {
  const g = state.graph;
  const tot = state.info.runs.map((r) => r.events || 1);
  const groups = new Map();
  for (const n of g.nodes) { const k = groupOf(n.site); groups.set(k, (groups.get(k) || 0) + 1); }
  const compound = groups.size > 1;
  const els = [], edgeEls = [];
  if (compound) for (const k of groups.keys()) els.push({ data: { id: `g:${k}`, label: k }, classes: 'group' });
  const maxc = Math.max(1, ...g.nodes.map((n) => Math.max(n.count[0], n.count[1])));
  for (const n of g.nodes) {
    const d = n.count[1] / tot[1] - n.count[0] / tot[0];
    // in the graph a site's file without its folders (the tables have the whole label)
    const short = n.name || `${n.site.slice(n.site.lastIndexOf('/') + 1)} "${n.fmt}"`;
    const size = 14 + 22 * Math.log1p(Math.max(n.count[0], n.count[1])) / Math.log1p(maxc);
    els.push({
      data: { id: `n${n.id}`, label: short.length > 32 ? short.slice(0, 31) + '…' : short, size, parent: compound ? `g:${groupOf(n.site)}` : undefined,
        color: Math.abs(d) < 0.005 ? '#c8cdd8' : d > 0 ? '#e8a090' : '#90b0e8' },
      classes: n.count[0] && n.count[1] ? '' : 'only',
    });
  }
  // Thousands of edges cost seconds a frame: a big graph draws the transitions that
  // changed (P(E2|E1) by 0.02 or more, or in one run only) and those of the reports' first
  // rows; the others ("quiet") are drawn around a chosen event or edge, or all of them
  // with the "all" button (state.showAll).
  const bigEdges = g.edges.length > BIG_EDGES;
  const ranked = new Set();
  if (bigEdges) for (const rep of ['transitions', 'times']) for (const r of state.diff[rep].slice(0, RANKED_SHOWN)) ranked.add(r.edge);
  let quiet = 0;
  for (const e of g.edges) {
    const dp = e.p[1] - e.p[0];
    const w = 1 + 9 * Math.min(1, Math.abs(dp) * 3);
    const both = e.count[0] && e.count[1];
    const q = bigEdges && both && Math.abs(dp) < 0.02 && !ranked.has(e.id);
    quiet += q;
    edgeEls.push({
      data: { id: `e${e.id}`, source: `n${e.from}`, target: `n${e.to}`, w, color: Math.abs(dp) < 0.02 ? '#aab' : dp > 0 ? '#c0392b' : '#2160c4',
        plabel: `${e.p[0].toFixed(3)} → ${e.p[1].toFixed(3)}` },
      classes: `${both ? '' : 'only'}${q ? ' quiet' : ''}`,
    });
  }
  state.quiet = quiet;
  // A big compound graph is laid out before it is drawn (layoutByGroups: positions of the
  // events only); the others by cose-bilkent in the drawn graph.
  const big = compound && g.nodes.length > 300;
  const t0 = performance.now();
  if (big) {
    const pos = layoutByGroups(g, new Map(els.map((e) => [e.data.id, e.data.size])));
    for (const e of els) if (pos.has(e.data.id)) e.position = pos.get(e.data.id);
  }
  // raising what is chosen sorts every element again (a second in a big compound graph)
  const zTop = bigEdges ? {} : { 'z-index': 99 };
  const tc = performance.now();
  // the events first, then the transitions: cytoscape takes seconds to make a compound
  // graph of 1,000 nodes and 10,000 edges at once, a tenth of that in two steps
  const cy = cytoscape({
    container: $('m-graph'),
    elements: els,
    layout: { name: 'preset', fit: false },
    hideEdgesOnViewport: bigEdges,
    textureOnViewport: bigEdges,
    style: [
      { selector: 'node[size]', style: { 'background-color': 'data(color)', width: 'data(size)', height: 'data(size)', label: 'data(label)', 'font-size': 9, 'text-valign': 'bottom', 'text-margin-y': 2, color: '#334', 'border-width': 1, 'border-color': '#667',
        // a thousand labels too small to read are not drawn
        'min-zoomed-font-size': bigEdges ? 6 : 0 } },
      { selector: 'node.only', style: { 'border-style': 'dashed', 'border-width': 2 } },
      { selector: 'node.group', style: { 'background-color': '#f3f4f8', 'background-opacity': 0.6, 'border-color': '#c4c8d4', label: 'data(label)', 'text-valign': 'top', 'font-size': 10, color: '#778', shape: 'round-rectangle' } },
      { selector: 'edge', style: { width: 'data(w)', 'line-color': 'data(color)', 'target-arrow-color': 'data(color)', 'target-arrow-shape': 'triangle', 'arrow-scale': 0.7,
        'curve-style': bigEdges ? 'straight' : 'bezier', opacity: 0.75 } },
      { selector: 'edge.only', style: { 'line-style': 'dashed' } },
      { selector: 'edge.quiet', style: { display: 'none' } },
      { selector: 'edge.quiet.near, edge.quiet.focus', style: { display: 'element' } },
      { selector: '.faded', style: { opacity: 0.12 } },
      { selector: 'edge.focus, edge:selected', style: { 'line-color': '#f0b000', 'target-arrow-color': '#f0b000', opacity: 1, width: 'mapData(w, 1, 10, 5, 12)', label: 'data(plabel)', 'font-size': 10, 'text-background-color': '#fff', 'text-background-opacity': 0.9, ...zTop } },
      { selector: 'node.focus, node:selected', style: { 'border-color': '#f0b000', 'border-width': 5, ...zTop } },
      { selector: 'node.anchor', style: { 'border-color': '#208040', 'border-width': 5 } },
    ],
  });
  cy.add(edgeEls);
  state.cy = cy;
  const tl = performance.now();
  if (big) fitNodes(cy, els);
  else cy.layout({
    name: 'cose-bilkent', animate: false, randomize: true, fit: true, padding: 20,
    quality: 'default', nodeDimensionsIncludeLabels: false, idealEdgeLength: 70, nodeRepulsion: 6000, tile: true,
  }).run();
  const te = performance.now();
  state.layoutMs = big ? tc - t0 : te - tl;
  state.timings = { ...state.timings, layout_ms: state.layoutMs, construct_ms: tl - tc, graph_ms: te - t0 };
  $('view-status').textContent = `${g.nodes.length} events, ${g.edges.length} transitions laid out in ${state.layoutMs.toFixed(0)} ms`;
  const all = $('m-all');
  all.hidden = !quiet;
  all.textContent = `all ${count(g.edges.length)} transitions`;
  all.title = `${count(quiet)} transitions that changed little are drawn only around what is chosen; this draws them all (slower)`;
  all.addEventListener('click', () => {
    state.showAll = !state.showAll;
    all.classList.toggle('active', state.showAll);
    cy.style().selector('edge.quiet').style('display', state.showAll ? 'element' : 'none').update();
  });
  cy.on('tap', 'node', (ev) => { if (!ev.target.hasClass('group')) chooseNode(Number(ev.target.id().slice(1)), ev.originalEvent && ev.originalEvent.shiftKey); });
  cy.on('tap', 'edge', (ev) => chooseEdge(Number(ev.target.id().slice(1))));
  cy.on('tap', (ev) => { if (ev.target === cy) clearFocus(); });
  $('m-fit').addEventListener('click', () => cy.fit(cy.nodes(), 20));
  $('m-graph-search').addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    const q = e.target.value.trim().toLowerCase();
    cy.elements().removeClass('faded');
    if (!q) return;
    const hit = cy.nodes().filter((n) => !n.hasClass('group') && searchText([Number(n.id().slice(1))]).includes(q));
    cy.elements().not(hit).not(hit.parents()).addClass('faded');
    if (hit.length) cy.fit(hit, 60);
  });
}

// A large compound graph laid out level by level (cose-bilkent each time): the events of
// each group (source file) with the transitions inside it, then the groups as nodes of
// their own size with the transitions between them; each group's events are moved to
// where their group landed. One CoSE over 1,000 events and 10,000 transitions takes tens
// of seconds (bench/README.md); this, well under a second. Returns the events' positions
// (by element id); sizes: each event's diameter.
function layoutByGroups(g, sizes) {
  const T0 = performance.now();
  const members = new Map(), inside = new Map();
  const groupOfNode = g.nodes.map((n) => groupOf(n.site));
  for (const n of g.nodes) {
    const k = groupOfNode[n.id];
    if (!members.has(k)) { members.set(k, []); inside.set(k, []); }
    members.get(k).push(n.id);
  }
  const keys = [...members.keys()], index = new Map(keys.map((k, i) => [k, i]));
  const between = new Set();
  for (const e of g.edges) {
    const a = groupOfNode[e.from], b = groupOfNode[e.to];
    if (a === b) { if (e.from !== e.to) inside.get(a).push(e); continue; }
    const x = index.get(a), y = index.get(b);
    between.add(x < y ? `${x}-${y}` : `${y}-${x}`);
  }
  const pos = new Map(), boxes = new Map();
  const opts = { name: 'cose-bilkent', animate: false, randomize: true, quality: 'draft', idealEdgeLength: 70, nodeRepulsion: 6000, fit: false };
  for (const [k, ids] of members) {
    const els = ids.map((id) => ({ data: { id: `n${id}` } }));
    for (const e of inside.get(k)) els.push({ data: { id: `e${e.id}`, source: `n${e.from}`, target: `n${e.to}` } });
    const sub = cytoscape({ headless: true, styleEnabled: true, elements: els });
    sub.nodes().forEach((n) => { const d = sizes.get(n.id()); n.style({ width: d, height: d }); });
    sub.layout(opts).run();
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    sub.nodes().forEach((n) => {
      const p = n.position();
      pos.set(n.id(), { x: p.x, y: p.y });
      x0 = Math.min(x0, p.x); x1 = Math.max(x1, p.x); y0 = Math.min(y0, p.y); y1 = Math.max(y1, p.y);
    });
    boxes.set(k, { x0, y0, x1, y1 });
    sub.destroy();
  }
  const t1 = performance.now();
  const gel = keys.map((k, i) => ({ data: { id: `g${i}` } }));
  for (const key of between) { const [a, b] = key.split('-'); gel.push({ data: { id: `ge${key}`, source: `g${a}`, target: `g${b}` } }); }
  const top = cytoscape({ headless: true, styleEnabled: true, elements: gel });
  top.nodes().forEach((n) => { const b = boxes.get(keys[Number(n.id().slice(1))]); n.style({ width: b.x1 - b.x0 + 60, height: b.y1 - b.y0 + 60 }); });
  top.layout({ ...opts, idealEdgeLength: 150 }).run();
  const t2 = performance.now();
  keys.forEach((k, i) => {
    const c = top.$id(`g${i}`).position(), b = boxes.get(k);
    const dx = c.x - (b.x0 + b.x1) / 2, dy = c.y - (b.y0 + b.y1) / 2;
    for (const id of members.get(k)) { const p = pos.get(`n${id}`); p.x += dx; p.y += dy; }
  });
  top.destroy();
  state.timings = { groups_ms: t1 - T0, top_ms: t2 - t1 };
  return pos;
}

// The viewport around the events' positions (cy.fit would measure every edge: seconds).
function fitNodes(cy, els) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const e of els) {
    if (!e.position) continue;
    const r = (e.data.size || 0) / 2;
    x0 = Math.min(x0, e.position.x - r); x1 = Math.max(x1, e.position.x + r);
    y0 = Math.min(y0, e.position.y - r); y1 = Math.max(y1, e.position.y + r + 12);
  }
  const pad = 30, zoom = Math.min((cy.width() - 2 * pad) / Math.max(1, x1 - x0), (cy.height() - 2 * pad) / Math.max(1, y1 - y0));
  cy.viewport({ zoom, pan: { x: cy.width() / 2 - zoom * (x0 + x1) / 2, y: cy.height() / 2 - zoom * (y0 + y1) / 2 } });
}

function clearFocus() {
  const cy = state.cy;
  cy.batch(() => unmark(cy));
  state.selected = null;
  state.anchor = null;
  markLinked();
}

// Takes the marks of the last choice off: in a big graph only what was marked is visited
// (a selector over 11,000 elements costs a frame), in the others everything.
function unmark(cy) {
  const big = state.graph.edges.length > BIG_EDGES;
  const was = big && state.marked ? state.marked : cy.elements();
  was.removeClass('focus faded anchor near').unselect();
  state.marked = null;
}

function focusGraph(eles) {
  const cy = state.cy;
  const big = state.graph.edges.length > BIG_EDGES;
  const near = eles.union(eles.connectedNodes()).union(eles.neighborhood());
  cy.batch(() => {
    // only what changes is touched: restyling 10,000 edges costs seconds
    unmark(cy);
    eles.addClass('focus');
    if (!big) eles.select();
    state.marked = eles;
    // the quiet edges of what is chosen are drawn
    if (state.quiet) {
      const around = eles.nodes().connectedEdges().addClass('near');
      state.marked = state.marked.union(around);
    }
    // fading thousands of edges costs seconds too: big graphs only highlight
    if (!big) cy.elements().not(near).not(near.parents()).addClass('faded');
  });
  // show it and its neighbours, never closer than 1.6x (big graphs: one jump, no animation)
  const bb = near.boundingBox();
  const zoom = Math.min(1.6, cy.width() / (bb.w + 120), cy.height() / (bb.h + 120));
  if (big) cy.viewport({ zoom, pan: { x: cy.width() / 2 - zoom * (bb.x1 + bb.x2) / 2, y: cy.height() / 2 - zoom * (bb.y1 + bb.y2) / 2 } });
  else cy.animate({ center: { eles: near }, zoom, duration: 250 });
}

// ---- brushing and linking ----

function markLinked() {
  const s = state.selected;
  for (const tr of $('m-table').tBodies[0].rows) {
    let on = false, sel = false;
    if (s && s.kind === 'node') {
      const n = String(s.id);
      on = tr.dataset.node === n || (tr.dataset.edge !== undefined && ends(Number(tr.dataset.edge)).map(String).includes(n));
    } else if (s && s.kind === 'edge') {
      on = tr.dataset.edge === String(s.id);
    } else if (s && s.kind === 'row') {
      sel = s.report === state.report && tr.dataset.rank === String(s.rank);
    }
    tr.classList.toggle('linked', on);
    tr.classList.toggle('selected', sel);
  }
  const first = $('m-table').querySelector('tr.linked, tr.selected');
  if (first && s && s.kind !== 'row') first.scrollIntoView({ block: 'nearest' });
}

function chooseRow(r, tr) {
  state.selected = { kind: 'row', report: state.report, rank: r.rank };
  markLinked();
  if (r.node !== undefined) {
    focusGraph(state.cy.$id(`n${r.node}`));
    showNode(r.node);
  } else {
    focusGraph(state.cy.$id(`e${r.edge}`));
    showEdge(r.edge);
  }
}

function chooseNode(id, shift) {
  if (shift && state.anchor !== null && state.anchor !== id) {
    focusGraph(state.cy.$id(`n${state.anchor}`).union(state.cy.$id(`n${id}`)));
    showPath(state.anchor, id);
    return;
  }
  state.selected = { kind: 'node', id };
  state.anchor = id;
  focusGraph(state.cy.$id(`n${id}`));
  const a = state.cy.$id(`n${id}`).addClass('anchor');
  if (state.marked) state.marked = state.marked.union(a);
  markLinked();
  showNode(id);
}

function chooseEdge(id) {
  state.selected = { kind: 'edge', id };
  focusGraph(state.cy.$id(`e${id}`));
  markLinked();
  showEdge(id);
}

// Where a node or an edge stands in each report.
function ranks(pred) {
  const out = [];
  for (const rep of ['events', 'transitions', 'times']) {
    const r = state.diff[rep].find(pred);
    if (r) out.push(`${rep} #${r.rank}`);
  }
  return out.length ? out.join(', ') : 'in no report (below the support?)';
}

function table(pairs) {
  const t = el('table');
  for (const [k, v] of pairs) { const tr = t.insertRow(); tr.insertCell().textContent = k; tr.insertCell().textContent = v; }
  return t;
}

function showNode(id) {
  const n = state.graph.nodes[id], runs = state.info.runs;
  const box = $('m-detail');
  box.textContent = '';
  box.dataset.kind = 'node';
  box.dataset.id = id;
  box.append(el('h4', { text: n.label }), table([
    ['site', n.site], ['format', n.fmt],
    ['baseline', `${count(n.count[0])} (${pct(n.count[0] / runs[0].events)})`],
    ['other', `${count(n.count[1])} (${pct(n.count[1] / runs[1].events)})`],
    ['ranked', ranks((r) => r.node === id || (r.edge !== undefined && ends(r.edge).includes(id)))],
  ]), el('p', { class: 'hint', text: 'Shift-click another event: the path CDF from this one to it (vigil cdf).' }));
  jumps(box, { node: id }, 'node', id);
}

async function showEdge(id) {
  const e = state.graph.edges[id];
  const box = $('m-detail');
  box.textContent = '';
  box.dataset.kind = 'edge';
  box.dataset.id = id;
  box.append(el('h4', { text: edgeLabel(id) }));
  const c = await get('model/cdf', { edge: id });
  if (box.dataset.id !== String(id) || box.dataset.kind !== 'edge') return; // another choice since
  const [a, b] = c.runs;
  box.append(table([
    ['P(E2|E1)', `baseline ${e.p[0].toFixed(4)} (${count(e.count[0])}), other ${e.p[1].toFixed(4)} (${count(e.count[1])})`],
    ['timed', `baseline ${a ? count(a.timed) : '—'}, other ${b ? count(b.timed) : '—'}; EMD ${ns(c.emd_ns)}`],
    ['ranked', ranks((r) => r.edge === id)],
  ]));
  const lg = el('div', { class: 'cdf-legend' });
  for (const [name, r, cls] of [['baseline', a, 'base'], ['other', b, 'other']])
    lg.append(el('span', { class: cls, text: r ? `${name}: p50 ${ns(r.p50)}, p90 ${ns(r.p90)}, p99 ${ns(r.p99)}, mean ${ns(r.mean)}` : `${name}: no such transition` }));
  box.append(lg);
  drawCdf(box, [{ name: 'baseline', color: BASE, points: a ? a.points : [] }, { name: 'other', color: OTHER, points: b ? b.points : [] }],
    { width: Math.max(360, box.clientWidth - 30), height: 180 });
  jumps(box, { edge: id }, 'edge', id);
}

// Links to each run's timeline (a run given as a trace) where its trace first has the
// event or transition (/api/model/where; main.js jumpFromHash reads the address).
async function jumps(box, what, kind, id) {
  // only events of the trace's own types are found there (a log statement is no type)
  const ends = kind === 'edge' ? [state.graph.edges[id].from, state.graph.edges[id].to] : [id];
  if (!ends.every((n) => state.graph.nodes[n].site.startsWith('sensor:'))) return;
  const p = el('p', { class: 'jumps' });
  for (const run of [0, 1]) {
    const x = kind === 'edge' ? state.graph.edges[id] : state.graph.nodes[id];
    if (!state.info.runs[run].timeline || !x.count[run]) continue; // not in that run
    let w;
    try {
      w = await get('model/where', { ...what, run });
    } catch (e) {
      p.append(el('span', { class: 'hint', text: `${run ? 'other' : 'baseline'}: ${e.message} ` }));
      continue;
    }
    const from = BigInt(w.from), to = BigInt(w.to), pad = (to - from) / 10n > 1000n ? (to - from) / 10n : 1000n;
    p.append(el('a', { class: 'jump', id: `m-timeline-${run}`, target: 'vigil-timeline', text: `${run ? 'other' : 'baseline'}: the first in its timeline ↗`,
      href: `index.html?run=${run}#from=${from - pad}&to=${to + pad}&at=${from}&pid=${w.pid}&tid=${w.tid}` }), ' ');
  }
  if (p.childNodes.length && box.dataset.kind === kind && box.dataset.id === String(id)) box.append(p);
}

async function showPath(from, to) {
  const box = $('m-detail');
  box.textContent = '';
  box.dataset.kind = 'path';
  box.dataset.id = `${from}-${to}`;
  box.append(el('h4', { text: `path CDF: ${nodeLabel(from)} ⇝ ${nodeLabel(to)}` }));
  const p = await get('model/path', { from, to });
  if (box.dataset.id !== `${from}-${to}`) return;
  const lg = el('div', { class: 'cdf-legend' });
  const names = ['baseline', 'other'];
  p.runs.forEach((r, i) => {
    const s = r.missing ? `${names[i]}: ${r.missing} is not in this run`
      : `${names[i]}: ${count(r.walks_reached)} of ${count(r.walks)} walks reached it, ${count(r.paths)} paths, mass ${r.mass.toFixed(4)}, ` +
        `${r.transitions} transitions${r.percentiles_ns ? `; p50 ${ns(r.percentiles_ns.p50)}, p90 ${ns(r.percentiles_ns.p90)}, p99 ${ns(r.percentiles_ns.p99)}` : ''}`;
    lg.append(el('div', { class: i ? 'other' : 'base', text: s }));
  });
  box.append(lg);
  drawCdf(box, p.runs.map((r, i) => ({ name: names[i], color: i ? OTHER : BASE, points: r.points || [] })),
    { width: Math.max(360, box.clientWidth - 30), height: 180 });
}

async function loadDiff() {
  const k = $('m-support').value;
  state.diff = await get('model/diff', k === '' ? {} : { min_support: k });
  if (state.graph) renderTable();
}

export async function setupModels() {
  state.info = await get('model/info');
  const runs = state.info.runs;
  $('view-name').textContent = 'model workbench';
  $('view-source').textContent = `baseline ${runs[0].path} · other ${runs[1].path}`;
  $('m-support').value = state.info.min_support;
  [state.graph] = await Promise.all([get('model/graph'), loadDiff()]);
  renderTable();
  buildGraph();
  document.querySelectorAll('#m-reports button').forEach((b) => b.addEventListener('click', () => {
    document.querySelectorAll('#m-reports button').forEach((x) => x.classList.toggle('active', x === b));
    state.report = b.dataset.report;
    renderTable();
  }));
  $('m-filters').addEventListener('submit', (e) => e.preventDefault());
  $('m-top').addEventListener('input', renderTable);
  $('m-search').addEventListener('input', renderTable);
  $('m-support').addEventListener('change', loadDiff);
  // for the tests and the benchmark: what is chosen, and how long the layout took
  window.vigilModels = {
    state, cy: state.cy,
    // ms of one run of a layout over the graph as it is (the benchmark's peer)
    timeLayout: (opts) => { const t = performance.now(); state.cy.layout(opts).run(); return performance.now() - t; },
    chosen: () => ({
      nodes: state.cy.nodes('.focus').map((n) => state.graph.nodes[Number(n.id().slice(1))]),
      edges: state.cy.edges('.focus').map((e) => { const x = state.graph.edges[Number(e.id().slice(1))]; return { id: x.id, from: state.graph.nodes[x.from], to: state.graph.nodes[x.to] }; }),
    }),
  };
}
