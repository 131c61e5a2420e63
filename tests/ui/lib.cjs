// Helpers of vigil ui's tests: a folder of the test's own (removed when it passes, kept and
// named when it fails), processes ended by pid, waits on conditions with a bound.
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const { spawn, execFileSync } = require('child_process');

const BIN = process.env.VIGIL_BIN;
const started = [];

function tempDir(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vigil-${name}-`));
}

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
}

// Runs and returns {status, stdout, stderr}, whatever the exit status.
function runAny(cmd, args, opts = {}) {
  try {
    const stdout = execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28, ...opts });
    return { status: 0, stdout, stderr: '' };
  } catch (e) {
    return { status: e.status, stdout: e.stdout || '', stderr: e.stderr || '' };
  }
}

// Starts vigil ui and waits (bounded) for the URL it prints on stderr.
// env: more environment (TMPDIR: where vigil ui --watch keeps the subject's trace).
function startUi(args, cwd, timeoutMs = 120000, env = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(path.join(BIN, 'vigil'), ['ui', ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    started.push(p);
    let err = '';
    const timer = setTimeout(() => reject(new Error(`vigil ui printed no URL in ${timeoutMs} ms: ${err}`)), timeoutMs);
    p.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/serving (http:\/\/(\S+):(\d+)\/)/);
      if (m) {
        clearTimeout(timer);
        resolve({ proc: p, url: m[1], host: m[2], port: Number(m[3]), stderr: () => err });
      }
    });
    p.on('exit', (code) => { clearTimeout(timer); reject(new Error(`vigil ui exited (${code}): ${err}`)); });
  });
}

// Waits for a process to exit (bounded); its exit code.
function waitExit(p, timeoutMs = 20000) {
  if (p.exitCode !== null) return Promise.resolve(p.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('process did not exit')), timeoutMs);
    p.on('exit', (code, sig) => { clearTimeout(timer); resolve(code === null ? sig : code); });
  });
}

// A process the test started itself: killed with the others if the test fails.
function track(p) {
  started.push(p);
  return p;
}

function stopAll() {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) try { process.kill(p.pid, 'SIGKILL'); } catch (e) { /* gone */ }
}

// A raw GET (the path sent exactly as given: no normalisation), {status, type, body}.
function rawGet(port, pathText, host = '127.0.0.1', method = 'GET', headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path: pathText, method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body, headers: res.headers }));
    });
    req.on('error', reject);
    req.setTimeout(30000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

// "YYYY-MM-DD HH:MM:SS.nnnnnnnnn" (UTC) of absolute ns given as digits: vgt_format_time.
function formatNs(digits) {
  const ns = BigInt(digits);
  const sec = ns / 1000000000n, frac = ns % 1000000000n;
  const iso = new Date(Number(sec) * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac.toString().padStart(9, '0')}`;
}

// Runs the test body; removes its folder when it passes, keeps it and says where if not.
async function main(name, body) {
  const dir = tempDir(name);
  let ok = false;
  try {
    await body(dir);
    ok = true;
  } catch (e) {
    console.error(`FAIL: ${e.stack || e}`);
  } finally {
    stopAll();
  }
  if (ok) {
    fs.rmSync(dir, { recursive: true, force: true });
    console.log(`${name}: passed`);
    process.exit(0);
  }
  console.error(`${name}: failed; its folder is kept: ${dir}`);
  process.exit(1);
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

module.exports = { BIN, run, runAny, startUi, waitExit, rawGet, formatNs, main, check, tempDir, track };
