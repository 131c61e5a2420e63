// The page's one way to the engine: the server's JSON API (docs/ui.md), or, in a static
// copy made by `vigil ui --export`, the same answers read from window.VIGIL_DATA.
const S = window.VIGIL_DATA || null;
export const isStatic = !!S;

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

// index.html?run=R: the timeline of the model workbench's run R (its own trace), asked of
// the workbench's server with run=R on every route.
const RUN = new URLSearchParams(location.search).get('run');

export function url(route, params = {}) {
  const q = new URLSearchParams();
  if (RUN !== null && !('run' in params)) q.set('run', RUN);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, String(v));
  const s = q.toString();
  return `api/${route}${s ? '?' + s : ''}`;
}

export async function get(route, params = {}) {
  if (S) return staticAnswer(route, params);
  const res = await fetch(url(route, params));
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

// As get, but each integer under one of `keys` also kept exactly as `KEY_digits` (a
// string): absolute times in ns exceed what a double holds (2^53).
export async function getExact(route, params, keys) {
  const res = await fetch(url(route, params));
  const text = await res.text();
  const want = new Set(keys);
  let body = null;
  try {
    body = JSON.parse(text, function (k, v, ctx) {
      if (want.has(k) && typeof v === 'number' && ctx && ctx.source) this[`${k}_digits`] = ctx.source;
      return v;
    });
  } catch (e) { body = null; }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

function staticAnswer(route, p) {
  switch (route) {
    case 'relations': return S.info;
    case 'rows': return S.rows;
    case 'events': {
      const from = Number(p.from ?? 0), to = Number(p.to ?? S.rows.span);
      const row0 = Number(p.row ?? 0), n = Number(p.rows ?? S.items.length);
      const rows = [];
      for (let r = row0; r < Math.min(S.items.length, row0 + n); r++) {
        const all = S.items[r].items || [];
        const items = all.filter((it) => {
          const end = S.rows.rows[r].kind === 'thread' || it.length === 2 ? it[0] : it[1];
          return it[0] <= to && end >= from;
        });
        rows.push({ row: r, items });
      }
      return { from, to, px: Number(p.px ?? 1000), rows };
    }
    case 'item': {
      const row = S.rows.rows[Number(p.row)];
      const t = row && (row.kind === 'thread' ? S.events[Number(p.i)] : S.tuples[Number(p.row)][String(p.i)]);
      if (!t) throw new ApiError(404, { error: 'no such item' });
      return t;
    }
    case 'search': {
      const q = String(p.q).toLowerCase();
      const sensors = S.rows.types.filter((t) => t.name.toLowerCase().includes(q)).map((t) => ({ name: t.name, count: t.count, first: [] }));
      const rows = S.rows.rows.filter((r) => (r.label + ' ' + r.group).toLowerCase().includes(q)).map((r) => r.row);
      return { sensors, rows };
    }
    case 'display/changes': return staticChanges(p);
    case 'display': return staticScene(Number(p.at));
    default:
      throw new ApiError(501, { error: 'queries need the engine: serve this trace with vigil ui to ask them' });
  }
}

// The first index of the sorted list whose value is >= t.
function lowerBound(list, t) {
  let lo = 0, hi = list.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (list[m] < t) lo = m + 1; else hi = m; }
  return lo;
}

// /api/display/changes's window, over the changes the copy holds.
function staticChanges(p) {
  const D = S.display;
  if (!D) throw new ApiError(404, { error: 'no display in this copy' });
  const c = D.changes, limit = Number(p.limit ?? 100000);
  const lo = lowerBound(c, Number(p.from ?? 0));
  const hi = p.to === undefined ? c.length : lowerBound(c, Number(p.to) + 1);
  const k = Math.max(0, Math.min(limit, hi - lo)), tail = p.take === 'last';
  const b = tail ? hi - k : lo;
  const r = { file: D.file, span: D.span, count: c.length, index: b, changes: c.slice(b, b + k), truncated: k < hi - lo, live: false };
  if (r.truncated) r[tail ? 'prev' : 'next'] = tail ? c[hi - k - 1] : c[lo + k];
  return r;
}

// The scene of the last frame at or before `at` (vgd_frames: what a scene holds only
// changes there), from scenes/NNNNN.js, loaded as a script: a page opened from disk may
// not fetch files.
const chunks = new Map();
function loadChunk(k) {
  if (!chunks.has(k)) {
    chunks.set(k, new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = `scenes/${String(k).padStart(5, '0')}.js`;
      s.onload = () => resolve(window.VIGIL_SCENES[k]);
      s.onerror = () => { chunks.delete(k); reject(new ApiError(404, { error: `${s.src} is missing from this copy` })); };
      document.head.appendChild(s);
    }));
  }
  return chunks.get(k);
}

async function staticScene(at) {
  const D = S.display;
  if (!D) throw new ApiError(404, { error: 'no display in this copy' });
  if (!(at >= 0 && at <= D.span)) throw new ApiError(400, { error: `'at' must be within 0..${D.span}` });
  const i = Math.max(0, lowerBound(D.frames, at + 1) - 1);
  const scenes = await loadChunk(Math.floor(i / D.chunk));
  return scenes[i % D.chunk];
}
