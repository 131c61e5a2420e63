// Debian's chromium driven by playwright-core (never a browser download): the launch
// every page test of vigil ui uses, with a fresh profile in the test's own folder.
const path = require('path');
const { chromium } = require('playwright-core');

async function launch(dir) {
  return chromium.launchPersistentContext(path.join(dir, 'chromium-profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 900 },
    acceptDownloads: true,
  });
}

// Every console error and uncaught exception of the page, collected.
function watchErrors(page, list) {
  page.on('console', (m) => { if (m.type() === 'error') list.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => list.push(`page error: ${e.message}`));
}

module.exports = { launch, watchErrors };
