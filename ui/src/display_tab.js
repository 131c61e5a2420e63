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
//
// The changes are asked for in windows (/api/display/changes?from&to&limit), never all at
// once: the page keeps the window around the instant, and asks for the next or previous
// change past it when stepping. Live (vigil ui --watch --display), the span grows while
// the subject runs: the page polls it and, while "follow" is ticked, shows the latest
// instant; when the subject has ended the display is over its whole trace.
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

const WINDOW = 2000; // changes kept around the instant

export async function setupDisplay(tl, opts = {}) {
  const svg = $('display-svg'), slider = $('display-at'), play = $('display-play');
  const speed = $('display-speed'), msg = $('display-msg'), follow = $('display-follow');
  // cache: a window of changes, [lo, hi] in valid time, list[i] the (index+i)-th change
  const state = { at: 0, pos: 0, span: 0, count: 0, live: false, playing: false, shown: null,
    cache: { lo: 0, hi: -1, index: 0, list: [] } };
  window.vigilDisplay = state;
  let info;
  try {
    info = await get('display/changes', { limit: 0 });
  } catch (e) {
    info = { error: e.message };
  }
  const failed = (r) => { // the .vgd did not load: its errors, as vigil ui printed them
    $('display-controls').hidden = true;
    svg.style.display = 'none';
    showErrors($('display-errors'), r, r.error);
    document.getElementById('display').dataset.state = 'errors';
  };
  if (info.error) return failed(info);

  let offered = '';
  const setSpan = (r) => {
    state.span = r.span;
    state.count = r.count;
    state.live = !!r.live;
    slider.max = String(r.span);
    const list = rates(r.span);
    if (list.join() !== offered) { // the speeds offered follow the span (it grows live)
      const keep = speed.value;
      offered = list.join();
      speed.textContent = '';
      for (const x of list) speed.add(new Option(`${formatDuration(x, x)}/s`, `rate:${x}`));
      for (const n of [1, 4, 20]) speed.add(new Option(`${n} change${n === 1 ? '' : 's'}/s`, `changes:${n}`));
      // the largest rate that plays the whole span in 10 s or more
      const fit = list.filter((x) => x * 10 <= Math.max(10, r.span));
      speed.value = keep.startsWith('changes:') ? keep : `rate:${fit.length ? fit[fit.length - 1] : list[0]}`;
    }
  };
  setSpan(info);

  // The changes around t: up to WINDOW/2 at or before it, WINDOW/2 after it.
  const loadAround = async (t) => {
    const [before, after] = await Promise.all([
      get('display/changes', { to: t, take: 'last', limit: WINDOW / 2 }),
      get('display/changes', { from: t + 1, limit: WINDOW / 2 })]);
    state.cache = {
      lo: before.truncated ? before.changes[0] : 0,
      hi: after.truncated ? after.changes[after.changes.length - 1] : Math.max(t, after.span),
      index: before.index, list: before.changes.concat(after.changes),
    };
  };
  const inCache = (t) => state.cache.lo <= t && t <= state.cache.hi;
  const showCount = () => {
    const c = state.cache;
    $('display-time').textContent = `+${formatDuration(state.at, 1)}`;
    $('display-change').textContent = inCache(state.at)
      ? `${c.index + nextIndex(c.list, state.at)} of ${state.count} changes` : `${state.count} changes`;
  };

  // One request in flight; the latest instant asked for wins.
  let inflight = false;
  const fetchScene = async () => {
    if (inflight) return;
    inflight = true;
    try {
      while (state.shown !== state.at) {
        const at = state.at;
        if (!inCache(at)) { await loadAround(at); showCount(); }
        const scene = await get('display', { at });
        renderDisplay(svg, scene, {});
        state.shown = at;
        tl.cursor = at; // the timeline marks the instant shown
        if (tl.meta) tl.draw();
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
    showCount();
    fetchScene();
  };
  // The next change after the instant, or the last one before it (from the window kept,
  // else asked for).
  const step = async (dir) => {
    const c = state.cache.list, at = state.at;
    if (dir > 0) {
      const i = nextIndex(c, at);
      if (i < c.length) return setAt(c[i]);
      const r = at < state.span ? await get('display/changes', { from: at + 1, limit: 1 }) : { changes: [] };
      return setAt(r.changes.length ? r.changes[0] : state.span);
    }
    const i = nextIndex(c, at - 1) - 1; // the last change before the instant
    if (i >= 0 && inCache(c[i])) return setAt(c[i]);
    const r = at > 0 ? await get('display/changes', { to: at - 1, take: 'last', limit: 1 }) : { changes: [] };
    return setAt(r.changes.length ? r.changes[0] : 0);
  };

  let last = null, acc = 0, stepping = false;
  const frame = (ts) => {
    if (!state.playing) return;
    if (last !== null) {
      const dt = Math.min(0.25, (ts - last) / 1000); // a hidden tab does not jump
      const [mode, v] = speed.value.split(':');
      if (mode === 'rate') setAt(state.pos + Number(v) * dt);
      else {
        acc += dt * Number(v);
        if (acc >= 1 && !stepping) {
          acc -= Math.floor(acc);
          stepping = true;
          step(1).finally(() => { stepping = false; });
        }
      }
    }
    last = ts;
    if (state.at >= state.span && !state.live) return pause();
    requestAnimationFrame(frame);
  };
  const pause = () => {
    state.playing = false;
    play.textContent = '▶ play';
    play.dataset.playing = '0';
  };
  const unfollow = () => { follow.checked = false; };
  play.addEventListener('click', () => {
    if (state.playing) return pause();
    unfollow();
    if (state.at >= state.span) setAt(0);
    state.playing = true;
    last = null;
    acc = 0;
    play.textContent = '‖ pause';
    play.dataset.playing = '1';
    requestAnimationFrame(frame);
  });
  $('display-prev').addEventListener('click', () => { pause(); unfollow(); step(-1); });
  $('display-next').addEventListener('click', () => { pause(); unfollow(); step(1); });
  slider.addEventListener('input', () => { unfollow(); setAt(Number(slider.value)); });
  follow.addEventListener('change', () => { if (follow.checked) { pause(); setAt(state.span); } });

  // Live: the span and the changes grow while the subject runs.
  if (state.live) {
    $('display-follow-label').hidden = false;
    follow.checked = true;
    const poll = async () => {
      let r;
      try {
        r = await get('display/changes', { limit: 0 });
      } catch (e) {
        msg.textContent = e.message;
        return setTimeout(poll, 1000);
      }
      if (r.error) { // the run's whole trace lacks what the display shows
        document.getElementById('display').dataset.live = 'ended';
        return failed(r);
      }
      const grew = r.span !== state.span || r.count !== state.count || r.live !== state.live;
      setSpan(r);
      document.getElementById('display').dataset.live = r.live ? (r.waiting ? 'waiting' : 'running') : 'ended';
      if (r.waiting) { // nothing it shows recorded yet; or ever, if the run has ended
        if (r.live) return setTimeout(poll, 400);
        msg.textContent = 'the run ended with nothing this display shows recorded';
        return;
      }
      if (grew) { // asked for again: the window of changes and the scene
        state.cache = { lo: 0, hi: -1, index: 0, list: [] };
        state.shown = null;
      }
      if (follow.checked) setAt(state.span);
      else if (grew) setAt(state.at);
      if (r.live) setTimeout(poll, 400);
    };
    document.getElementById('display').dataset.state = 'ready';
    return poll();
  }
  // a live page opened after the subject ended: the display is the whole run's already
  if (opts.live) document.getElementById('display').dataset.live = 'ended';
  document.getElementById('display').dataset.state = 'ready';
  setAt(0);
}
