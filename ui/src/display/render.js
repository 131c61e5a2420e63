// Draws a display scene (the JSON of vgd_scene_json, docs/display.md "Scenes") into an
// SVG element, with plain DOM calls: no dependency. It makes the same elements, in the
// same order and with the same attributes, as the static SVG of `vigil display render`
// (src/display/scene_svg.c); tests/display/render_browser.py compares the two.
//
//   import { renderDisplay } from './display/render.js';
//   renderDisplay(document.querySelector('svg'), scene, { onSelect: (item) => ... });
//
// options.onSelect(item, event): called with the scene's icon or link object on a click.
// Returns { icons: Map(id -> <g>), links: [<g>] }.

const NS = 'http://www.w3.org/2000/svg';

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

const f2 = (v) => Number(v).toFixed(2);

// Where an icon's label goes: [x, y, anchor]; mirrors label_place() of scene_svg.c.
export function labelPlace(ic) {
  const w = (ic.w * ic.scale) / 2;
  const h = (ic.h * ic.scale) / 2;
  switch (ic.label_at) {
    case 'top': return [ic.x, ic.y - h - 4, 'middle'];
    case 'bottom': return [ic.x, ic.y + h + 13, 'middle'];
    case 'left': return [ic.x - w - 4, ic.y + 4, 'end'];
    case 'right': return [ic.x + w + 4, ic.y + 4, 'start'];
    case 'top left': return [ic.x - w + 4, ic.y - h + 13, 'start'];
    case 'top right': return [ic.x + w - 4, ic.y - h + 13, 'end'];
    case 'bottom left': return [ic.x - w + 4, ic.y + h - 4, 'start'];
    case 'bottom right': return [ic.x + w - 4, ic.y + h - 4, 'end'];
    default: return [ic.x, ic.y + 4, 'middle'];
  }
}

function shape(g, ic, s, fill, stroke) {
  const w = ic.w / 2;
  const h = ic.h / 2;
  switch (s.shape) {
    case 'point':
      el('circle', { r: 3, fill: stroke }, g);
      break;
    case 'circle':
    case 'oval':
      el('ellipse', { rx: f2(w), ry: f2(h), fill, stroke }, g);
      break;
    case 'rectangle':
      el('rect', { x: f2(-w), y: f2(-h), width: f2(2 * w), height: f2(2 * h), rx: 4, fill, stroke }, g);
      break;
    case 'polygon': {
      const pts = [];
      for (let i = 0; i < s.sides; i++) {
        const a = -Math.PI / 2 + (2 * Math.PI * i) / s.sides;
        pts.push(`${f2(w * Math.cos(a))},${f2(h * Math.sin(a))}`);
      }
      el('polygon', { points: pts.join(' '), fill, stroke }, g);
      break;
    }
    case 'line':
      el('line', { x1: f2(-w), y1: 0, x2: f2(w), y2: 0, stroke, 'stroke-width': 2 }, g);
      break;
    case 'pointer':
      el('line', { x1: f2(-w), y1: 0, x2: f2(w - 8), y2: 0, stroke, 'stroke-width': 2 }, g);
      el('polygon', { points: `${f2(w)},0 ${f2(w - 9)},-5 ${f2(w - 9)},5`, fill: stroke }, g);
      break;
    case 'curve':
      el('path', { d: `M ${f2(-w)} 0 Q 0 ${f2(-2 * h)} ${f2(w)} 0`, fill: 'none', stroke, 'stroke-width': 2 }, g);
      break;
    default: // text: the label is the icon
      break;
  }
}

function drawIcon(root, ic, options) {
  const cls = ['icon'];
  if (ic.flash) cls.push('flash');
  if (ic.past) cls.push('past');
  const g = el('g', {
    class: cls.join(' '),
    'data-id': ic.id,
    'data-relation': ic.relation,
    'data-parent': ic.parent ?? '',
    opacity: f2(ic.opacity),
  }, root);
  if (ic.flash) el('animate', { attributeName: 'opacity', values: '1;0.15;1', dur: '0.8s', repeatCount: 'indefinite' }, g);
  const body = el('g', {
    transform: `translate(${f2(ic.x)} ${f2(ic.y)}) rotate(${f2(ic.rotation)}) scale(${Number(ic.scale).toFixed(3)})`,
  }, g);
  for (const s of ic.shapes) shape(body, ic, s, ic.fill, ic.colour);
  if (ic.label) {
    const [x, y, anchor] = labelPlace(ic);
    const dark = ic.label_at === 'center' && ic.intensity > 0.6;
    const t = el('text', { x: f2(x), y: f2(y), 'text-anchor': anchor, fill: dark ? '#ffffff' : '#000000', 'font-size': 12 }, g);
    t.textContent = ic.label;
  }
  if (options.onSelect) g.addEventListener('click', (e) => options.onSelect(ic, e));
  return g;
}

function drawLink(root, l, options) {
  const g = el('g', {
    class: l.past ? 'link past' : 'link',
    'data-relation': l.relation,
    'data-from': l.from,
    'data-to': l.to,
    opacity: f2(l.opacity),
  }, root);
  const dx = l.x2 - l.x1;
  const dy = l.y2 - l.y1;
  const len = Math.hypot(dx, dy);
  const ux = len > 0 ? dx / len : 1;
  const uy = len > 0 ? dy / len : 0;
  let mx = (l.x1 + l.x2) / 2;
  let my = (l.y1 + l.y2) / 2;
  const stroke = { stroke: l.colour, 'stroke-width': f2(l.width) };
  if (l.shape === 'curve') { // bowed to the left of its direction
    mx += uy * len * 0.2;
    my -= ux * len * 0.2;
    el('path', { d: `M ${f2(l.x1)} ${f2(l.y1)} Q ${f2(mx)} ${f2(my)} ${f2(l.x2)} ${f2(l.y2)}`, fill: 'none', ...stroke }, g);
  } else {
    el('line', { x1: f2(l.x1), y1: f2(l.y1), x2: f2(l.x2), y2: f2(l.y2), ...stroke }, g);
  }
  if (l.shape !== 'line') { // the head, along the last direction of the stroke
    let hx = l.x2 - (l.shape === 'curve' ? mx : l.x1);
    let hy = l.y2 - (l.shape === 'curve' ? my : l.y1);
    const hl = Math.hypot(hx, hy);
    hx = hl > 0 ? hx / hl : 1;
    hy = hl > 0 ? hy / hl : 0;
    const size = 8 + 2 * l.width;
    const pts = [
      [l.x2, l.y2],
      [l.x2 - hx * size - (hy * size) / 2, l.y2 - hy * size + (hx * size) / 2],
      [l.x2 - hx * size + (hy * size) / 2, l.y2 - hy * size - (hx * size) / 2],
    ];
    el('polygon', { points: pts.map(([x, y]) => `${f2(x)},${f2(y)}`).join(' '), fill: l.colour }, g);
  }
  if (l.label) {
    const lx = l.shape === 'curve' ? (l.x1 + 2 * mx + l.x2) / 4 : mx;
    const ly = l.shape === 'curve' ? (l.y1 + 2 * my + l.y2) / 4 : my;
    const t = el('text', { x: f2(lx), y: f2(ly - 4), 'text-anchor': 'middle', 'font-size': 11 }, g);
    t.textContent = l.label;
  }
  if (options.onSelect) g.addEventListener('click', (e) => options.onSelect(l, e));
  return g;
}

// The ruler of a time axis; mirrors the "axis" group of scene_svg.c (positions rounded
// there to 1e-4 px in the JSON: compared within 0.02 px).
function drawAxis(root, a) {
  const g = el('g', { class: 'axis' }, root);
  el('line', { x1: f2(a.x0), y1: f2(a.y), x2: f2(a.x1), y2: f2(a.y), stroke: '#000000' }, g);
  for (const t of a.ticks) {
    el('line', { x1: f2(t.x), y1: f2(a.y), x2: f2(t.x), y2: f2(a.y + 5), stroke: '#000000' }, g);
    const text = el('text', { x: f2(t.x), y: f2(a.y + 17), 'text-anchor': 'middle', 'font-size': 11 }, g);
    text.textContent = t.text;
  }
}

function drawClock(root, scene) {
  const c = scene.clock;
  const anchor = /left/.test(c.at) ? 'start' : /right/.test(c.at) ? 'end' : 'middle';
  const t = el('text', {
    class: 'clock', x: f2(c.x), y: f2(c.y), 'text-anchor': anchor, 'dominant-baseline': 'middle',
    'font-family': 'monospace', 'font-size': 16,
  }, root);
  t.textContent = c.text;
}

export function renderDisplay(svg, scene, options = {}) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.setAttribute('viewBox', `0 0 ${scene.width} ${scene.height}`);
  svg.setAttribute('font-family', 'sans-serif');
  el('rect', { width: '100%', height: '100%', fill: '#ffffff' }, svg);
  const icons = new Map();
  const links = [];
  if (scene.axis) drawAxis(svg, scene.axis);
  for (const ic of scene.icons) icons.set(ic.id, drawIcon(svg, ic, options));
  for (const l of scene.links) links.push(drawLink(svg, l, options));
  if (scene.clock) drawClock(svg, scene);
  return { icons, links };
}
