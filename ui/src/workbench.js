// The query workbench: TQuel text to the engine (the answers and error messages of
// vigil query and vigil explain), errors shown under the editor with the source line and
// a caret at line:col, results as sortable tables and as rows of the timeline.
import { get, url, isStatic } from './api.js';

export class Workbench {
  constructor(els, timeline) {
    this.els = els;
    this.timeline = timeline;
    els.run.addEventListener('click', () => this.run());
    els.explain.addEventListener('click', () => this.explain());
    els.editor.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.run(); }
    });
    els.editor.addEventListener('input', () => this.updateDownloads());
    this.updateDownloads();
    if (isStatic) {
      els.status.textContent = 'a static copy: queries need vigil ui (the engine)';
      els.run.disabled = els.explain.disabled = true;
    }
  }

  updateDownloads() {
    const q = this.els.editor.value;
    for (const [el, f] of [[this.els.csv, 'csv'], [this.els.json, 'jsonl'], [this.els.sqlite, 'sqlite']]) {
      el.href = url('query', { q, format: f });
      el.setAttribute('download', f === 'sqlite' ? 'results.db' : f === 'csv' ? 'results.csv' : 'results.jsonl');
    }
  }

  clear() {
    this.els.errors.textContent = '';
    this.els.results.textContent = '';
    this.els.explainOut.hidden = true;
  }

  showErrors(errors) {
    const text = this.els.editor.value.split('\n');
    for (const e of errors) {
      const d = document.createElement('div');
      d.className = 'error';
      d.dataset.line = e.line;
      d.dataset.col = e.col;
      const m = document.createElement('div');
      m.className = 'msg';
      m.textContent = e.line ? `${e.line}:${e.col}: ${e.message}` : e.message;
      d.appendChild(m);
      if (e.line > 0) {
        // the line as typed, and a caret under the column (tabs kept so it lines up)
        const src = text[e.line - 1] ?? '';
        const pre = document.createElement('pre');
        pre.className = 'caret-line';
        pre.textContent = src + '\n';
        const pad = src.slice(0, e.col - 1).replace(/[^\t]/g, ' ');
        pre.appendChild(document.createTextNode(pad));
        const caret = document.createElement('span');
        caret.className = 'caret-mark';
        caret.textContent = '^';
        pre.appendChild(caret);
        d.appendChild(pre);
        d.addEventListener('click', () => this.focusAt(e.line, e.col));
      }
      this.els.errors.appendChild(d);
    }
    if (errors.length && errors[0].line > 0) this.focusAt(errors[0].line, errors[0].col);
  }

  focusAt(line, col) {
    const lines = this.els.editor.value.split('\n');
    let off = 0;
    for (let i = 0; i < line - 1 && i < lines.length; i++) off += lines[i].length + 1;
    off += col - 1;
    this.els.editor.focus();
    this.els.editor.setSelectionRange(off, off + 1);
  }

  async run() {
    this.clear();
    this.els.status.textContent = 'running…';
    const t0 = performance.now();
    let r;
    try {
      r = await get('query', { q: this.els.editor.value });
    } catch (e) {
      r = { errors: [{ line: 0, col: 0, message: e.message }] };
    }
    if (r.errors && r.errors.length) {
      this.els.status.textContent = 'errors';
      this.showErrors(r.errors);
      return;
    }
    const n = r.results.reduce((s, x) => s + x.tuples, 0);
    this.els.status.textContent = `${r.results.length} result${r.results.length === 1 ? '' : 's'}, ${n} tuple${n === 1 ? '' : 's'} in ${Math.round(performance.now() - t0)} ms`;
    for (const res of r.results) this.els.results.appendChild(this.table(res));
    await this.timeline.load();
    if (r.results.length && r.results[0].rows < r.results[0].rows_end) this.timeline.scrollToRow(r.results[0].rows);
  }

  async explain() {
    this.clear();
    try {
      const r = await get('explain', { q: this.els.editor.value });
      if (r.errors && r.errors.length) {
        this.els.status.textContent = 'errors';
        this.showErrors(r.errors);
        return;
      }
      this.els.explainOut.textContent = r.text;
      this.els.explainOut.hidden = false;
      this.els.status.textContent = 'explained';
    } catch (e) {
      this.els.status.textContent = 'errors';
      this.showErrors([{ line: 0, col: 0, message: e.message }]);
    }
  }

  table(res) {
    const wrap = document.createElement('div');
    const title = document.createElement('div');
    title.className = 'result-title';
    title.textContent = `${res.relation} (${res.kind}, ${res.tuples} tuple${res.tuples === 1 ? '' : 's'}${res.truncated ? ', first ' + res.values.length + ' shown' : ''})`;
    wrap.appendChild(title);
    const t = document.createElement('table');
    t.className = 'result';
    t.dataset.relation = res.relation;
    const cols = res.kind === 'event' ? [{ name: 'at', time: 'time', key: 'rfrom' }]
      : [{ name: 'from', time: 'time', key: 'rfrom' }, { name: 'to', time: 'time_to', key: 'rto' }];
    for (const a of res.attrs) cols.push({ name: a.name, attr: true });
    const head = t.createTHead().insertRow();
    const body = t.createTBody();
    let sortCol = -1, asc = true;
    const cell = (tu, c) => (c.attr ? tu.values[c.name] : tu[c.time]);
    const key = (tu, c) => (c.attr ? tu.values[c.name] : tu[c.key]);
    const render = () => {
      body.textContent = '';
      const rows = res.values.slice();
      if (sortCol >= 0) {
        const c = cols[sortCol];
        rows.sort((a, b) => {
          const x = key(a, c), y = key(b, c);
          const r = x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
          return asc ? r : -r;
        });
      }
      for (const tu of rows) {
        const tr = body.insertRow();
        tr.addEventListener('click', () => this.timeline.zoomTo(tu.rfrom - 1000, (tu.rto ?? tu.rfrom) + 1000));
        for (const c of cols) {
          const v = cell(tu, c);
          tr.insertCell().textContent = v === null || v === undefined ? '' : String(v);
        }
      }
    };
    cols.forEach((c, i) => {
      const th = document.createElement('th');
      th.textContent = c.name;
      th.addEventListener('click', () => {
        asc = sortCol === i ? !asc : true;
        sortCol = i;
        head.querySelectorAll('th').forEach((h) => h.classList.remove('sorted-asc', 'sorted-desc'));
        th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
        render();
      });
      head.appendChild(th);
    });
    render();
    wrap.appendChild(t);
    return wrap;
  }
}
