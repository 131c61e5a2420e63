// Numbers for people, as the CLI prints them (vgm_format_ns: 840 ns, 12.3 us, 4.56 ms).
export function ns(v) {
  if (v === null || v === undefined || !isFinite(v)) return '—';
  const a = Math.abs(v);
  if (a < 1e3) return `${Math.round(v)} ns`;
  if (a < 1e6) return `${(v / 1e3).toPrecision(3)} us`;
  if (a < 1e9) return `${(v / 1e6).toPrecision(3)} ms`;
  return `${(v / 1e9).toPrecision(3)} s`;
}

export function pct(v) {
  return v === null || v === undefined ? '—' : `${(100 * v).toFixed(3)}%`;
}

export function count(v) {
  return v === null || v === undefined ? '—' : Number(v).toLocaleString('en');
}

export function bytes(v) {
  if (v < 1024) return `${v} B`;
  if (v < 1 << 20) return `${(v / 1024).toFixed(1)} KiB`;
  return `${(v / (1 << 20)).toFixed(1)} MiB`;
}

export function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const k of kids) e.append(k);
  return e;
}
