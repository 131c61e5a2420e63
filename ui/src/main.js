// vigil ui's page: header, timeline, selection, query workbench, display (docs/ui.md).
import { get, isStatic } from './api.js';
import { Timeline, formatDuration } from './timeline.js';
import { Workbench } from './workbench.js';
import { setupDisplay } from './display_tab.js';

const $ = (id) => document.getElementById(id);

function showSelection(t, row) {
  const el = $('selection');
  el.textContent = '';
  const h = document.createElement('h3');
  h.textContent = 'Selection';
  el.appendChild(h);
  if (t.error) {
    el.appendChild(document.createTextNode(t.error));
    return;
  }
  const tab = document.createElement('table');
  tab.id = 'tuple';
  const add = (k, v) => {
    const tr = tab.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    tr.dataset.key = k;
  };
  add('relation', t.relation);
  if (t.event && t.event !== t.relation) add('sensor', t.event);
  if (t.kind === 'event') add('valid at', t.time);
  else {
    add('valid from', t.time);
    add('valid to', t.time_to + (t.open ? ' (open at the end)' : ''));
  }
  add('duration', t.rto !== undefined ? formatDuration(t.rto - t.rfrom) : '0 (event)');
  for (const [k, v] of Object.entries(t.values || {})) add(k, v);
  if (t.stream) {
    add('stream', t.stream);
    add('offset', t.offset);
    add('process', `${t.proc} [${t.pid}]`);
    add('thread', t.tid);
  } else if (row) {
    add('row', `${row.group} · ${row.label}`);
  }
  el.appendChild(tab);
}

async function main() {
  const info = await get('relations');
  $('trace-name').textContent = info.traces.join(' ');
  $('trace-stats').textContent = `${info.events} events · ${info.relations.length} relations${isStatic ? ' · static copy' : ''}`;
  if (info.damage && info.damage.length) {
    $('damage').hidden = false;
    $('damage').textContent = `The trace is damaged; what was readable is shown (${info.damage.length} place${info.damage.length === 1 ? '' : 's'}):\n` + info.damage.join('\n');
  }
  if (info.live) setupLive();
  const tl = new Timeline({ scroll: $('timeline-scroll'), labels: $('labels'), canvas: $('timeline'), ruler: $('ruler') }, showSelection);
  window.vigilTimeline = tl;
  if (!info.live || info.traces.length) {
    await tl.load();
    jumpFromHash(tl, info);
    window.addEventListener('hashchange', () => jumpFromHash(tl, info));
  } else window.vigilLiveTimeline = tl; // loaded when the subject has ended
  new Workbench({
    editor: $('editor'), run: $('run'), explain: $('explain'), errors: $('errors'), results: $('results'),
    explainOut: $('explain-out'), status: $('query-status'), csv: $('dl-csv'), json: $('dl-json'), sqlite: $('dl-sqlite'),
  }, tl);

  $('search-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const q = $('search').value.trim();
    const box = $('search-results');
    document.querySelectorAll('.match').forEach((n) => n.classList.remove('match'));
    if (!q) { tl.highlightTypes = null; tl.matchRows = null; box.hidden = true; tl.draw(); return; }
    const r = await get('search', { q });
    const lq = q.toLowerCase();
    tl.highlightTypes = new Set(tl.types.map((t, i) => (t.name.toLowerCase().includes(lq) || t.relation.toLowerCase().includes(lq) ? i : -1)).filter((i) => i >= 0));
    const rows = new Set(r.rows);
    r.sensors.forEach((s) => s.first.forEach(([row]) => rows.add(row)));
    tl.matchRows = rows.size ? rows : null;
    for (const row of r.rows) document.querySelector(`.row-label[data-row="${row}"]`)?.classList.add('match');
    box.textContent = '';
    box.hidden = false;
    if (!r.sensors.length && !r.rows.length) box.textContent = `nothing named like “${q}”`;
    for (const s of r.sensors) {
      const d = document.createElement('div');
      d.textContent = `sensor ${s.name}: ${s.count} event${s.count === 1 ? '' : 's'}`;
      box.appendChild(d);
      for (const [row, t, ref] of s.first) {
        const a = document.createElement('a');
        a.textContent = `  first in ${tl.rows[row].label} at +${formatDuration(t)}`;
        a.addEventListener('click', () => {
          const span = tl.view.t1 - tl.view.t0;
          tl.zoomTo(t - span / 20, t + span / 20);
          tl.scrollToRow(row);
          tl.select(row, ref, t);
        });
        box.appendChild(a);
      }
    }
    for (const row of r.rows.slice(0, 50)) {
      const a = document.createElement('a');
      a.textContent = `row ${tl.rows[row].group} · ${tl.rows[row].label}`;
      a.addEventListener('click', () => tl.scrollToRow(row));
      box.appendChild(a);
    }
    tl.draw();
  });

  // The Display tab: shown (and in front) when vigil ui was given --display D.vgd.
  if (info.display) {
    $('display-tab').hidden = false;
    if (!info.live) {
      document.querySelectorAll('#tabs button').forEach((x) => x.classList.toggle('active', x.id === 'display-tab'));
      document.querySelectorAll('.tab').forEach((t) => { t.hidden = t.id !== 'display'; });
    }
    await setupDisplay(tl, { live: !!info.live });
  }
  document.querySelectorAll('#tabs button').forEach((b) => b.addEventListener('click', () => {
    document.querySelectorAll('#tabs button').forEach((x) => x.classList.toggle('active', x === b));
    document.querySelectorAll('.tab').forEach((t) => { t.hidden = t.id !== b.dataset.tab; });
  }));
  document.body.dataset.ready = '1';
}

// A jump from the analysis views (docs/ui.md): index.html#from=NS&to=NS&at=NS&pid=P&tid=T,
// times in ns since the epoch as the trace recorded them; the view shows [from, to], a line
// marks `at`, and the row of thread tid (of process pid) is scrolled to.
function jumpFromHash(tl, info) {
  const h = new URLSearchParams(location.hash.slice(1));
  if (!h.has('from') || !h.has('to')) return;
  // BigInt: absolute ns exceed what a double holds exactly
  const rel = (k) => Number(BigInt(h.get(k)) - BigInt(info.first_digits ?? info.first));
  let t0, t1;
  try {
    t0 = rel('from');
    t1 = Math.max(t0 + 1, rel('to'));
    tl.cursor = h.has('at') ? rel('at') : null;
  } catch (e) {
    console.warn('timeline: a jump that is not numbers:', location.hash);
    return;
  }
  tl.zoomTo(t0, t1);
  const tid = Number(h.get('tid')), pid = h.get('pid');
  const row = tl.rows.find((r) => r.kind === 'thread' && r.tid === tid && (!pid || r.pid === Number(pid)));
  if (row) tl.scrollToRow(row.row);
  tl.jump = { from: t0, to: t1, at: tl.cursor, row: row ? row.row : null };
  $('trace-stats').dataset.jump = '1';
}

// vigil ui --watch: the answers as vigil watch produces them, polled from /api/live;
// when the subject has ended and its trace is open, the page reloads onto it.
function setupLive() {
  $('live-tab').hidden = false;
  document.querySelectorAll('#tabs button').forEach((x) => x.classList.toggle('active', x.id === 'live-tab'));
  document.querySelectorAll('.tab').forEach((t) => { t.hidden = t.id !== 'live'; });
  let from = 0, n = 0;
  const body = $('live-table').tBodies[0], status = $('live-status');
  const poll = async () => {
    let r;
    try {
      r = await get('live', { from });
    } catch (e) {
      status.textContent = e.message;
      return setTimeout(poll, 1000);
    }
    from = r.lines;
    for (const t of r.tuples) {
      const tr = body.insertRow();
      tr.insertCell().textContent = t.time ?? '';
      tr.insertCell().textContent = t.time_to ?? '';
      tr.insertCell().textContent = t.relation;
      tr.insertCell().textContent = Object.entries(t.values).map(([k, v]) => `${k}=${v}`).join(' ');
      n++;
    }
    if (r.output.length) $('live-output').textContent += r.output.join('\n') + '\n';
    status.dataset.running = r.running ? '1' : '0';
    status.textContent = r.running ? `running (vigil watch, pid ${r.pid}): ${n} tuple${n === 1 ? '' : 's'} so far`
      : `the subject ended (exit ${r.exit}): ${n} tuple${n === 1 ? '' : 's'}${r.trace ? '; its trace is open in the timeline' : ''}`;
    if (r.running || !r.trace) return setTimeout(poll, r.running ? 300 : 500);
    if (window.vigilLiveTimeline) {
      const info = await get('relations');
      $('trace-name').textContent = 'live run';
      $('trace-stats').textContent = `${info.events} events · ${info.relations.length} relations · the subject has ended`;
      await window.vigilLiveTimeline.load();
    }
    document.body.dataset.liveDone = '1';
  };
  poll();
}

main().catch((e) => {
  console.error(e);
  document.body.dataset.ready = 'error';
});
