// Debian's chromium for the page sides of vigil ui's benchmarks (playwright-core, never a
// browser download): a fresh profile, and every console error or page error collected.
const path = require('path');
const { chromium } = require('playwright-core');

async function launch(profile, extraArgs = []) {
  const ctx = await chromium.launchPersistentContext(path.resolve(profile), {
    executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', ...extraArgs],
  });
  const errors = [];
  const page = ctx.pages()[0] || (await ctx.newPage());
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return { ctx, page, errors };
}

module.exports = { launch };
