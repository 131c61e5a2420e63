// The Display tab (docs/ui.md): the display given with `vigil ui --display D.vgd` played
// as a movie over valid time. The scene at an instant comes from /api/display?at=T (the
// engine lays it out: vgd_scene_json) and is drawn by render.js; /api/display/changes
// gives the span and the instants at which the display changes (for stepping). When the
// .vgd did not load, the tab shows its errors as vigil ui printed them (file:line:col,
// the source line, a caret).
//
// Speed is valid time per second of wall time, offered in decades around the trace's
// span (so a trace of a few µs plays as well as one of minutes), or change by change.
// The timeline marks the instant shown with a vertical line.
import { get } from './api.js';
import { formatDuration } from './timeline.js';
import { renderDisplay } from './display/render.js';

const $ = (id) => document.getElementById(id);

// Decades of valid ns per wall second from which the whole span plays in 1 s .. 1000 s.
function rates(span) {
  const out = [];
  for (let r = 1; r <= 1e15; r *= 10) if (r * 1000 >= span && r <= Math.max(1, span)) out.push(r);
  if (!out.length) out.push(1);
  return out;
}

// The first index of a sorted array whose value is > t (after) or the last < t (before).
function nextIndex(list, t) {
  let lo = 0, hi = list.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (list[m] <= t) lo = m + 1; else hi = m; }
  return lo;
}

function showErrors(box, body, fallback) {
  box.textContent = '';
  const errors = (body && body.errors) || [];
  if (!errors.length) {
    const d = document.createElement('div');
    d.className = 'error';
    d.textContent = fallback;
    box.appendChild(d);
    return;
  }
  for (const e of errors) {
    // the text as vigil ui printed it on stderr: the message, the source line, a caret
    const [head, ...rest] = e.text.split('\n');
    const d = document.createElement('div');
    d.className = 'error';
    d.dataset.file = e.file;
    d.dataset.line = e.line;
    d.dataset.col = e.col;
    const m = document.createElement('div');
    m.className = 'msg';
    m.textContent = head;
    d.appendChild(m);
    if (rest.length) {
      const pre = document.createElement('pre');
      pre.className = 'caret-line';
      rest.forEach((line, i) => {
        if (i) pre.appendChild(document.createTextNode('\n'));
        const k = /^[ \t.]*\^$/.test(line) ? line.lastIndexOf('^') : -1;
        if (k < 0) { pre.appendChild(document.createTextNode(line)); return; }
        pre.appendChild(document.createTextNode(line.slice(0, k)));
        const caret = document.createElement('span');
        caret.className = 'caret-mark';
        caret.textContent = '^';
        pre.appendChild(caret);
      });
      d.appendChild(pre);
    }
    box.appendChild(d);
  }
}

export async function setupDisplay(tl) {
  const svg = $('display-svg'), slider = $('display-at'), play = $('display-play');
  const speed = $('display-speed'), msg = $('display-msg');
  const state = { at: 0, pos: 0, span: 0, changes: [], playing: false, shown: null };
  window.vigilDisplay = state;
  let info;
  try {
    info = await get('display/changes');
  } catch (e) {
    info = { error: e.message };
  }
  if (info.error) { // the .vgd did not load: its errors, as vigil ui printed them
    $('display-controls').hidden = true;
    svg.style.display = 'none';
    showErrors($('display-errors'), info, info.error);
    document.getElementById('display').dataset.state = 'errors';
    return;
  }
  state.span = info.span;
  state.changes = info.changes;
  slider.max = String(info.span);
  for (const r of rates(info.span)) speed.add(new Option(`${formatDuration(r, r)}/s`, `rate:${r}`));
  for (const n of [1, 4, 20]) speed.add(new Option(`${n} change${n === 1 ? '' : 's'}/s`, `changes:${n}`));
  // the largest rate that plays the whole span in 10 s or more
  const fit = rates(info.span).filter((r) => r * 10 <= Math.max(10, info.span));
  speed.value = `rate:${fit.length ? fit[fit.length - 1] : rates(info.span)[0]}`;

  // One request in flight; the latest instant asked for wins.
  let inflight = false;
  const fetchScene = async () => {
    if (inflight) return;
    inflight = true;
    try {
      while (state.shown !== state.at) {
        const at = state.at;
        const scene = await get('display', { at });
        renderDisplay(svg, scene, {});
        state.shown = at;
        tl.cursor = at; // the timeline marks the instant shown
        tl.draw();
        svg.dataset.at = String(at);
        msg.textContent = '';
      }
    } catch (e) {
      msg.textContent = e.message;
      state.shown = state.at; // not asked again until the instant changes
    } finally {
      inflight = false;
    }
  };
  const setAt = (t) => {
    state.pos = Math.max(0, Math.min(state.span, t)); // fractions of ns kept: slow rates move
    state.at = Math.round(state.pos);
    slider.value = String(state.at);
    const k = nextIndex(state.changes, state.at);
    $('display-time').textContent = `+${formatDuration(state.at, 1)}`;
    $('display-change').textContent = `${k} of ${state.changes.length} changes`;
    fetchScene();
  };
  const step = (dir) => {
    const c = state.changes;
    if (dir > 0) {
      const i = nextIndex(c, state.at);
      setAt(i < c.length ? c[i] : state.span);
    } else {
      const i = nextIndex(c, state.at - 1) - 1; // the last change before the instant
      setAt(i >= 0 ? c[i] : 0);
    }
  };

  let last = null, acc = 0;
  const frame = (ts) => {
    if (!state.playing) return;
    if (last !== null) {
      const dt = Math.min(0.25, (ts - last) / 1000); // a hidden tab does not jump
      const [mode, v] = speed.value.split(':');
      if (mode === 'rate') setAt(state.pos + Number(v) * dt);
      else {
        acc += dt * Number(v);
        if (acc >= 1) { acc -= Math.floor(acc); step(1); }
      }
    }
    last = ts;
    if (state.at >= state.span) return pause();
    requestAnimationFrame(frame);
  };
  const pause = () => {
    state.playing = false;
    play.textContent = '▶ play';
    play.dataset.playing = '0';
  };
  play.addEventListener('click', () => {
    if (state.playing) return pause();
    if (state.at >= state.span) setAt(0);
    state.playing = true;
    last = null;
    acc = 0;
    play.textContent = '‖ pause';
    play.dataset.playing = '1';
    requestAnimationFrame(frame);
  });
  $('display-prev').addEventListener('click', () => { pause(); step(-1); });
  $('display-next').addEventListener('click', () => { pause(); step(1); });
  slider.addEventListener('input', () => setAt(Number(slider.value)));
  document.getElementById('display').dataset.state = 'ready';
  setAt(0);
}
