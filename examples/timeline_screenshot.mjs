#!/usr/bin/env node
/*
 * A picture of a flame graph page with a time range selected, as a person
 * would select it: the page opened from file:// in Debian's headless
 * Chromium ($CHROMIUM, /usr/bin/chromium by default), the icicle box
 * ticked (root at top, right under the timeline), a drag across the
 * timeline from FROM to TO seconds, then a PNG of the window's top, made
 * tall enough to show the frame named FRAME, if one is named, and the row
 * under it.
 *
 *   node examples/timeline_screenshot.mjs PAGE.html FROM TO OUT.png [FRAME]
 *
 * Uses the browser tests' playwright-core (npm ci in tests/browser, done by
 * install-deps.sh) and the page's own flamegraphPage.timelinePoint, which
 * the browser tests use to find where a time is drawn. Exits non-zero, with
 * the reason, if the page does not report the selected range.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const VIEWPORT = { width: 1200, height: 1000 };
const WAIT_MS = 15000;

const [page, from, to, out, frame] = process.argv.slice(2);
if (!out || !(Number(to) > Number(from))) {
	console.error('usage: node examples/timeline_screenshot.mjs PAGE.html FROM TO OUT.png [FRAME] (FROM < TO, in seconds)');
	process.exit(2);
}

const require = createRequire(new URL('../tests/browser/package.json', import.meta.url));
let playwright;
try {
	playwright = require('playwright-core');
} catch (e) {
	console.error(`timeline_screenshot.mjs: cannot load playwright-core (${e.code}): run "npm ci" in tests/browser`);
	process.exit(1);
}

const browser = await playwright.chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium' });
try {
	const tab = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
	tab.setDefaultTimeout(WAIT_MS);
	await tab.goto(pathToFileURL(path.resolve(page)).href, { waitUntil: 'load' });
	await tab.locator('#invert').click();
	const at = (s) => tab.evaluate((t) => flamegraphPage.timelinePoint(t, -1), s);
	const a = await at(Number(from)), b = await at(Number(to));
	await tab.mouse.move(a.x, a.y);
	await tab.mouse.down();
	await tab.mouse.move(b.x, b.y, { steps: 8 });
	await tab.mouse.up();
	await tab.waitForFunction(() => document.getElementById('timeinfo').textContent.startsWith('Selected'));
	await tab.evaluate(() => window.scrollTo(0, 0));
	if (frame) {
		const r = await tab.evaluate((n) => flamegraphPage.frameRect(n), frame);
		if (!r)
			throw new Error(`the selected range has no frame named ${frame}`);
		const height = Math.ceil(r.y + 2.5 * r.height);
		if (height > VIEWPORT.height)
			await tab.setViewportSize({ width: VIEWPORT.width, height });
	}
	await tab.screenshot({ path: out });
	console.log(`timeline_screenshot.mjs: ${await tab.evaluate(() => document.getElementById('timeinfo').textContent)}` +
		` (${tab.url().replace(/.*#/, '#')}) in ${out}`);
} finally {
	await browser.close();
}
