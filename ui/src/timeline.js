// The timeline: one labelled row per thread (grouped by host and process) and per key of
// the interval, state and entity relations and of the last query's results; events as
// marks, intervals as bars, drawn on a canvas. The server answers each window with the
// items themselves or with per-pixel buckets (count, first, last) when a row has more
// than a pixel can show (docs/ui.md), so a large trace never comes to the page whole.
import { scaleLinear, schemeTableau10 } from 'd3';
import { get } from './api.js';

const H = 18; // row height (labels are DOM, in the same scroll box, same height)

// A duration in readable units: the unit of `ref` (a ruler passes its largest value, so
// that every tick has one unit), decimals enough for `step` (a ruler's tick step), else 3.
export function formatDuration(ns, step = null, ref = null) {
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
  const r = Math.abs(ref ?? Math.max(Math.abs(ns), Math.abs(step ?? 0)));
  const [div, unit] = units.find(([d]) => r >= d) || [1, 'ns'];
  const dec = step ? Math.max(0, Math.min(9, Math.ceil(-Math.log10(Math.abs(step) / div) - 1e-9))) : div === 1 ? 0 : 3;
  return `${(ns / div).toFixed(dec)} ${unit}`;
}

export class Timeline {
  constructor(els, onSelect) {
    this.els = els; // {scroll, labels, canvas, ruler}
    this.onSelect = onSelect;
    this.rows = [];
    this.lines = [];
    this.win = null;
    this.view = { t0: 0, t1: 1 };
    this.highlightTypes = null;
    this.matchRows = null;
    this.selected = null;
    this.cursor = null; // the Display tab's instant (ns since the first event), or null
    this.seq = 0;
    this.inflight = false;
    this.dirty = false;
    this.pendingStep = null;
    window.vigilPerf = window.vigilPerf || { steps: [], firstPaint: null };
    this.bind();
  }

  async load() {
    const r = await get('rows');
    this.meta = r;
    this.types = r.types;
    this.setRows(r.rows);
    if (!this.loaded) {
      this.view = { t0: 0, t1: Math.max(1, r.span) };
      this.loaded = true;
    }
    this.resize();
    await this.fetch();
  }

  setRows(rows) {
    this.rows = rows;
    this.lines = [];
    let group = null;
    for (const row of rows) {
      if (row.group !== group) {
        group = row.group;
        this.lines.push({ group });
      }
      row.line = this.lines.length;
      this.lines.push({ row });
    }
    const L = this.els.labels;
    L.textContent = '';
    for (const ln of this.lines) {
      const d = document.createElement('div');
      if (ln.group !== undefined) {
        d.className = 'group-label';
        d.textContent = ln.group;
      } else {
        d.className = 'row-label';
        d.dataset.kind = ln.row.kind;
        d.dataset.row = ln.row.row;
        d.textContent = ln.row.label;
        d.title = `${ln.row.group} · ${ln.row.label} · ${ln.row.items} item${ln.row.items === 1 ? '' : 's'}`;
      }
      L.appendChild(d);
    }
  }

  // The canvas is as high as the scroll box shows (it sticks to its top): only the visible
  // rows are asked for and drawn.
  resize() {
    const c = this.els.canvas, dpr = window.devicePixelRatio || 1, col = c.parentElement;
    this.Hpx = Math.max(H, this.lines.length * H);
    col.style.height = this.Hpx + 'px';
    this.W = Math.max(50, col.clientWidth);
    this.viewH = Math.max(H, Math.min(this.Hpx, this.els.scroll.clientHeight));
    c.style.width = this.W + 'px';
    c.style.height = this.viewH + 'px';
    c.width = Math.round(this.W * dpr);
    c.height = Math.round(this.viewH * dpr);
    const r = this.els.ruler;
    r.width = Math.round(r.clientWidth * dpr);
    r.height = Math.round(r.clientHeight * dpr);
    this.dpr = dpr;
    this.draw();
  }

  // Lines and rows on screen (with a margin of rows asked for beyond them).
  visible() {
    const top = this.els.scroll.scrollTop;
    const l0 = Math.max(0, Math.floor(top / H)), l1 = Math.min(this.lines.length, Math.ceil((top + this.viewH) / H));
    let r0 = Infinity, r1 = -1;
    for (let l = l0; l < l1; l++) if (this.lines[l].row) { r0 = Math.min(r0, this.lines[l].row.row); r1 = Math.max(r1, this.lines[l].row.row); }
    return { top, l0, l1, r0: r1 < 0 ? 0 : r0, r1: r1 < 0 ? -1 : r1 };
  }

  x(t) { return ((t - this.view.t0) / (this.view.t1 - this.view.t0)) * this.W; }
  t(x) { return this.view.t0 + (x / this.W) * (this.view.t1 - this.view.t0); }

  // The window the view shows, asked of the server; the latest answer wins.
  async fetch() {
    if (this.inflight) { this.dirty = true; return; }
    this.inflight = true;
    const v = { ...this.view }, seq = ++this.seq, step = this.pendingStep;
    this.pendingStep = null;
    const vis = this.visible(), margin = 10;
    const row0 = Math.max(0, vis.r0 - margin), row1 = Math.min(this.rows.length - 1, vis.r1 + margin);
    try {
      const w = await get('events', { from: Math.floor(v.t0), to: Math.ceil(v.t1), px: Math.round(this.W), row: row0, rows: Math.max(0, row1 - row0 + 1) });
      w.byRow = new Map(w.rows.map((r) => [r.row, r]));
      w.row0 = row0;
      w.row1 = row1;
      if (seq === this.seq) {
        this.win = w;
        this.draw();
        const now = performance.now();
        if (window.vigilPerf.firstPaint === null) {
          window.vigilPerf.firstPaint = now;
          performance.mark('vigil-first-paint');
        }
        if (step && !this.dirty) window.vigilPerf.steps.push({ kind: step.kind, ms: now - step.start });
      }
    } catch (e) {
      console.warn('timeline window:', e.message);
    } finally {
      this.inflight = false;
      if (this.dirty) { this.dirty = false; this.fetch(); }
    }
  }

  setView(t0, t1, kind) {
    const span = Math.max(1, this.meta ? this.meta.span : 1);
    let w = Math.min(Math.max(t1 - t0, 10), span * 4);
    if (t0 < -span * 2) t0 = -span * 2;
    this.view = { t0, t1: t0 + w };
    if (kind && !this.pendingStep) this.pendingStep = { kind, start: performance.now() };
    this.draw();
    this.fetch();
  }

  color(row, type) {
    if (row.kind === 'thread') return schemeTableau10[type % 10];
    if (row.kind === 'result') return '#c0307a';
    if (row.kind === 'entity') return '#7a8aa6';
    return schemeTableau10[(hash(row.relation || row.group) + 3) % 10];
  }

  draw() {
    const c = this.els.canvas, g = c.getContext('2d'), vis = this.visible();
    g.setTransform(this.dpr, 0, 0, this.dpr, 0, -vis.top * this.dpr);
    g.clearRect(0, vis.top, this.W, this.viewH);
    for (let i = vis.l0; i < vis.l1; i++) {
      const ln = this.lines[i];
      if (ln.group !== undefined) { g.fillStyle = '#eef0f4'; g.fillRect(0, i * H, this.W, H); }
      else if (i % 2) { g.fillStyle = '#fafbfc'; g.fillRect(0, i * H, this.W, H); }
    }
    this.drawRuler();
    if (!this.win) return;
    // Rectangles are batched per colour and opacity (one fill per batch): tens of
    // thousands of buckets cost one path each, not one state change each.
    // Touching rectangles of one batch and row become one.
    const batches = new Map();
    const rect = (color, alpha, x, y, w, h) => {
      const key = color + '|' + (Math.round(alpha * 10) / 10);
      let b = batches.get(key);
      if (!b) batches.set(key, (b = { p: new Path2D(), last: null }));
      const l = b.last;
      if (l && l.y === y && x <= l.x + l.w + 0.5 && x >= l.x) {
        l.w = Math.max(l.w, x + w - l.x);
        return;
      }
      if (l) b.p.rect(l.x, l.y, l.w, l.h);
      b.last = { x, y, w, h };
    };
    const hl = this.highlightTypes;
    for (let r = vis.r0; r <= vis.r1; r++) {
      const row = this.rows[r];
      const d = this.win.byRow.get(row.row);
      if (!d) continue;
      const y = row.line * H;
      const base = this.matchRows && !this.matchRows.has(row.row) ? 0.25 : 1;
      if (d.buckets) {
        const color = this.color(row, 0);
        for (const [, count, min, max] of d.buckets) {
          const x0 = this.x(min), x1 = Math.max(this.x(max), x0 + 1);
          rect(color, base * Math.min(1, 0.3 + Math.log10(count + 1) / 3), x0, y + 3, x1 - x0, H - 6);
        }
        continue;
      }
      for (const it of d.items) {
        if (row.kind === 'thread') {
          const [t, , type] = it;
          const x = this.x(t);
          if (x < -2 || x > this.W + 2) continue;
          rect(this.color(row, type), hl && !hl.has(type) ? 0.15 : base, Math.round(x) - 1, y + 2, 2, H - 4);
        } else if (it.length >= 3) {
          const x0 = Math.max(-1, this.x(it[0])), x1 = Math.min(this.W + 1, this.x(it[1]));
          if (x1 < 0 || x0 > this.W) continue;
          // coloured by the other attribute's value when there is one (it[3])
          const color = row.kind === 'entity' ? this.color(row, 0) : schemeTableau10[(it[3] + (row.kind === 'result' ? 6 : 0)) % 10];
          rect(color, base, x0, y + 3, Math.max(1, x1 - x0), H - 6);
        } else {
          rect(this.color(row, 0), base, Math.round(this.x(it[0])) - 1, y + 2, 2, H - 4);
        }
      }
    }
    for (const [key, b] of batches) {
      const [color, alpha] = key.split('|');
      if (b.last) b.p.rect(b.last.x, b.last.y, b.last.w, b.last.h);
      g.globalAlpha = Number(alpha);
      g.fillStyle = color;
      g.fill(b.p);
    }
    g.globalAlpha = 1;
    const s = this.selected;
    if (s && s.x0 !== undefined) {
      const row = this.rows[s.row];
      if (row) {
        g.strokeStyle = '#d02020';
        g.lineWidth = 2;
        const x0 = this.x(s.x0), x1 = Math.max(this.x(s.x1), x0 + 2);
        g.strokeRect(x0 - 2, row.line * H + 1, x1 - x0 + 4, H - 2);
      }
    }
    if (this.cursor !== null) { // the instant the Display tab shows
      const x = Math.round(this.x(this.cursor)) + 0.5;
      g.strokeStyle = '#2050b0';
      g.lineWidth = 1;
      g.beginPath();
      g.moveTo(x, vis.top);
      g.lineTo(x, vis.top + this.viewH);
      g.stroke();
    }
  }

  drawRuler() {
    const r = this.els.ruler, g = r.getContext('2d'), w = r.clientWidth, h = r.clientHeight;
    g.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const sc = scaleLinear().domain([this.view.t0, this.view.t1]).range([0, this.W]);
    const ticks = sc.ticks(Math.max(2, Math.floor(this.W / 110)));
    const step = ticks.length > 1 ? ticks[1] - ticks[0] : this.view.t1 - this.view.t0;
    g.fillStyle = '#334';
    g.strokeStyle = '#99a';
    g.font = '11px system-ui, sans-serif';
    for (const t of ticks) {
      const x = Math.round(sc(t)) + 0.5;
      g.beginPath(); g.moveTo(x, h - 8); g.lineTo(x, h); g.stroke();
      g.fillText('+' + formatDuration(t, step, Math.max(Math.abs(this.view.t0), Math.abs(this.view.t1))), x + 3, 12);
    }
  }

  // The item under (x, y): [row, item] or a bucket.
  hit(px, py) {
    const line = this.lines[Math.floor((py + this.els.scroll.scrollTop) / H)];
    if (!line || !line.row || !this.win) return null;
    const row = line.row, d = this.win.byRow.get(row.row);
    if (!d) return null;
    if (d.buckets) {
      for (const b of d.buckets) if (px >= this.x(b[2]) - 2 && px <= Math.max(this.x(b[3]), this.x(b[2]) + 1) + 2) return { row, bucket: b };
      return null;
    }
    let best = null, bd = 6;
    for (const it of d.items) {
      const interval = row.kind !== 'thread' && it.length >= 3;
      const x0 = this.x(it[0]), x1 = interval ? this.x(it[1]) : x0;
      const dist = px < x0 ? x0 - px : px > x1 ? px - x1 : 0;
      if (dist < bd || (dist === 0 && best && interval)) { bd = dist; best = { row, it, interval }; }
    }
    return best;
  }

  // The latest selection's answer wins: an earlier one's, coming after it (the server
  // answers each request on a thread of its own), is dropped.
  async select(rowIndex, ref, from, to) {
    this.selected = { row: rowIndex, ref, x0: from, x1: to ?? from };
    const seq = this.selectSeq = (this.selectSeq || 0) + 1;
    this.draw();
    let t;
    try {
      t = await get('item', { row: rowIndex, i: ref });
    } catch (e) {
      t = { error: e.message };
    }
    if (seq === this.selectSeq) this.onSelect(t, this.rows[rowIndex]);
  }

  zoomTo(t0, t1) { this.setView(t0, t1, 'jump'); }

  scrollToRow(r) {
    const row = this.rows[r];
    if (row) this.els.scroll.scrollTop = Math.max(0, row.line * H - 2 * H);
  }

  bind() {
    const c = this.els.canvas;
    this.els.scroll.addEventListener('scroll', () => {
      this.draw();
      const vis = this.visible();
      if (this.win && (vis.r0 < this.win.row0 || vis.r1 > this.win.row1)) this.fetch();
    });
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const rect = c.getBoundingClientRect(), px = e.clientX - rect.left;
      const { t0, t1 } = this.view;
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        const d = ((e.shiftKey ? e.deltaY : e.deltaX) / this.W) * (t1 - t0);
        this.setView(t0 + d, t1 + d, 'pan');
        return;
      }
      const f = Math.exp(e.deltaY * 0.002), tm = this.t(px);
      this.setView(tm - (tm - t0) * f, tm + (t1 - tm) * f, 'zoom');
    }, { passive: false });
    let drag = null;
    c.addEventListener('mousedown', (e) => {
      drag = { x: e.clientX, t0: this.view.t0, t1: this.view.t1, moved: false };
      c.classList.add('dragging');
    });
    window.addEventListener('mousemove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (!drag.moved) return;
      const d = (-dx / this.W) * (drag.t1 - drag.t0);
      this.setView(drag.t0 + d, drag.t1 + d, 'pan');
    });
    window.addEventListener('mouseup', (e) => {
      if (!drag) return;
      const moved = drag.moved;
      drag = null;
      c.classList.remove('dragging');
      if (moved) return;
      const rect = c.getBoundingClientRect();
      const h = this.hit(e.clientX - rect.left, e.clientY - rect.top);
      if (!h) return;
      if (h.bucket) {
        const [, , min, max] = h.bucket, pad = Math.max(10, (max - min) * 0.1);
        this.zoomTo(min - pad, max + pad);
        return;
      }
      const it = h.it;
      if (h.row.kind === 'thread') this.select(h.row.row, it[1], it[0]);
      else if (h.interval) this.select(h.row.row, it[2], it[0], it[1]);
      else this.select(h.row.row, it[1], it[0]);
    });
    c.addEventListener('dblclick', () => this.zoomTo(0, Math.max(1, this.meta.span)));
    window.addEventListener('resize', () => { this.resize(); this.fetch(); });
  }
}

function hash(s) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return Math.abs(h);
}
