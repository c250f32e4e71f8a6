#!/usr/bin/env -S node --test-reporter=tap
/*
 * Browser tests of the flame graph page, in Chromium and in Firefox. The
 * pages are written by the project's own writers: $PAGE_WRITER
 * (flamegraph_pages.c, built by make) writes one page per check into a fresh
 * directory, with expected.json, the texts and numbers each page must show,
 * computed in C from the same profiles. This file opens each page from
 * file:// in each browser, drives it with real mouse and keyboard input, and
 * compares.
 *
 * Both browsers are Debian's and both are driven by Playwright
 * (playwright-core, pinned by package-lock.json), so every check is one body
 * of code run twice: Chromium ($CHROMIUM, /usr/bin/chromium by default) over
 * the DevTools protocol, Firefox ($FIREFOX, /usr/bin/firefox-esr by default)
 * over WebDriver BiDi, which stock Firefox speaks itself (Playwright's
 * "moz-firefox" channel, not yet in its API documentation; its default
 * Firefox would be a patched build of its own, which Debian does not have).
 * Each browser's checks form one suite, named after it; the browser is
 * launched once for its suite and closed after it, before the next one
 * starts.
 *
 * Each check gets its own browser context (no state carried between
 * checks), which is closed pass or fail. A page that throws, logs an error,
 * fails to load a resource or opens a dialog fails its check. Without
 * playwright-core (npm ci in tests/browser) or without a browser every check
 * in that browser fails and says how to install it. Screenshots go to
 * $ARTIFACT_DIR (build/artifacts by default), named after the browser.
 *
 * Results are printed as TAP; tests/run-suite.sh counts them from the
 * summary lines ("# pass N", "# fail N").
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const WAIT_MS = 5000;      /* for the page to react to one input */
const COMMAND_MS = 15000;  /* one browser command; a loaded 2-core machine can be slow */
const LAUNCH_MS = 30000;
const CHECK_MS = 120000;   /* a whole check: a hung browser fails it, never hangs the run */
const VIEWPORT = { width: 1200, height: 800 };

const pageWriter = process.env.PAGE_WRITER || 'build/asan/tests/flamegraph_pages';
const artifactDir = process.env.ARTIFACT_DIR || 'build/artifacts';

/* The browsers every check runs in, one suite each, in this order. */
const BROWSERS = [
	{
		name: 'chromium',
		path: process.env.CHROMIUM || '/usr/bin/chromium',
		install: 'install Debian\'s chromium (apt-get install chromium, or ./install-deps.sh), or set CHROMIUM',
		launch: (playwright, executablePath) => playwright.chromium.launch({ executablePath, timeout: LAUNCH_MS }),
	},
	{
		name: 'firefox',
		path: process.env.FIREFOX || '/usr/bin/firefox-esr',
		install: 'install Debian\'s firefox-esr (apt-get install firefox-esr, or ./install-deps.sh), or set FIREFOX',
		/* The moz- channels speak WebDriver BiDi to the Firefox at executablePath. */
		launch: (playwright, executablePath) =>
			playwright.firefox.launch({ channel: 'moz-firefox', executablePath, timeout: LAUNCH_MS }),
	},
];

let written;

/* The pages and what they must show, written once for every browser. */
function pages() {
	if (!written)
		written = writePages();
	return written;
}

async function writePages() {
	const dir = await mkdtemp(path.join(tmpdir(), 'jbpf-pages-'));

	try {
		await promisify(execFile)(pageWriter, [dir]);
		return { dir, expected: JSON.parse(await readFile(path.join(dir, 'expected.json'), 'utf8')) };
	} catch (e) {
		await rm(dir, { recursive: true, force: true });
		throw new Error(`${pageWriter} did not write the pages (run it through make check-browser): ` +
			`${(e.stderr || e.message).trim()}`);
	}
}

after(async () => {
	try {
		if (written)
			await rm((await written).dir, { recursive: true, force: true });
	} catch {
		/* the pages were never written: every check has said why */
	}
});

async function loadPlaywright() {
	try {
		return await import('playwright-core');
	} catch (e) {
		throw new Error(`cannot load playwright-core (${e.code || e.message}): run "npm ci" in tests/browser, ` +
			'or ./install-deps.sh');
	}
}

async function launch(browser) {
	const playwright = await loadPlaywright();

	try {
		await access(browser.path, constants.X_OK);
	} catch (e) {
		throw new Error(`no browser at ${browser.path} (${e.code}): ${browser.install}`);
	}
	return browser.launch(playwright, browser.path);
}

/*
 * An element whose file fails to load (missing, or refused by the page's
 * Content-Security-Policy) is a failed request in Chromium, but Firefox's
 * WebDriver BiDi reports no requests of a file:// page, nor the refusal: in
 * both, the element's error event is logged as an error instead.
 */
function reportFailedLoads() {
	window.addEventListener('error', (e) => {
		if (e.target !== window)
			console.error(`load failed: <${e.target.localName}> ${e.target.src || e.target.href || ''}`);
	}, true);
}

/* One check's page, and what it did: errors and dialogs are recorded from the moment it opens. */
class PageTest {
	constructor(t, page, dir, expected, browserName) {
		this.t = t;
		this.page = page;
		this.dir = dir;
		this.expected = expected;
		this.browserName = browserName;
		this.errors = [];
		this.dialogs = 0;
		page.setDefaultTimeout(COMMAND_MS);
		page.on('pageerror', (e) => this.errors.push(`exception: ${e.stack || e.message}`));
		page.on('console', (m) => {
			if (m.type() === 'error' || m.type() === 'assert')
				this.errors.push(`console.${m.type()}: ${m.text()}`);
		});
		page.on('requestfailed', (r) => this.errors.push(`load failed: ${r.url()}: ${r.failure()?.errorText}`));
		page.on('dialog', (d) => {
			this.dialogs++;
			this.errors.push(`dialog: ${d.message()}`);
			/* A dialog blocks the page; dismiss it. */
			d.dismiss().catch(() => {});
		});
	}

	async open() {
		await this.page.goto(pathToFileURL(path.join(this.dir, this.expected.page)).href, { waitUntil: 'load' });
		this.noPageErrors();
	}

	noPageErrors() {
		if (this.errors.length || this.dialogs)
			assert.fail(`the page reported ${this.errors.length} error(s), ${this.dialogs} dialog(s):\n` +
				this.errors.join('\n'));
	}

	/* Waits until fn(arg), run in the page, is true. */
	async waitTrue(what, fn, arg) {
		try {
			await this.page.waitForFunction(fn, arg, { timeout: WAIT_MS });
		} catch (e) {
			assert.fail(`still not true after ${WAIT_MS} ms: ${what} (${e.message.split('\n')[0]})`);
		}
	}

	/* Where the page drew the frame named name; null when it is not drawn. */
	frameRect(name) {
		return this.page.evaluate((n) => flamegraphPage.frameRect(n), name);
	}

	async drawnFrame(name) {
		const r = await this.frameRect(name);

		if (!r)
			assert.fail(`the page drew no frame named ${name}`);
		assert.ok(r.width >= 4, `${name} is drawn ${r.width} pixels wide`);
		return r;
	}

	async clickAt(r) {
		await this.page.mouse.click(r.x + r.width / 2, r.y + r.height / 2);
	}

	async hover(r) {
		/* Away first, so the page sees a move even onto the same spot. */
		await this.page.mouse.move(0, 0);
		await this.page.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
		await this.waitTrue('the tooltip is shown', () => !document.getElementById('tooltip').hidden);
	}

	textOf(id) {
		return this.page.evaluate((i) => document.getElementById(i).textContent, id);
	}

	async screenshot(file, what) {
		const where = path.join(artifactDir, `${this.browserName}-${file}`);

		await mkdir(artifactDir, { recursive: true });
		await this.page.screenshot({ path: where });
		this.t.diagnostic(`screenshot of ${what} in ${this.browserName}: ${where}`);
	}

	/* The colour of the canvas pixel just inside the top left corner of the frame's box, as [r, g, b]. */
	pixelOf(name) {
		return this.page.evaluate((n) => {
			const r = flamegraphPage.frameRect(n), c = document.getElementById('canvas');
			const b = c.getBoundingClientRect(), k = c.width / b.width;
			const d = c.getContext('2d').getImageData(Math.floor((r.x - b.left + 1) * k),
				Math.floor((r.y - b.top + 1) * k), 1, 1).data;
			return [d[0], d[1], d[2]];
		}, name);
	}
}

function assertContains(haystack, needle) {
	if (!haystack.includes(needle))
		assert.fail(`expected "${needle}" in "${haystack}"`);
}

const checks = [];

/* A check on its own page, named as in expected.json; run in every browser by browserSuite(). */
function check(name, body) {
	checks.push({ name, body });
}

/* Every check in one browser, each in a fresh browser context; the browser is closed after the last. */
function browserSuite(browser) {
	describe(browser.name, () => {
		let launched;

		after(async () => {
			if (launched)
				await launched.then((b) => b.close(), () => {});
		});
		for (const { name, body } of checks) {
			test(name, { timeout: CHECK_MS }, async (t) => {
				const { dir, expected } = await pages();
				if (!launched)
					launched = launch(browser);
				const context = await (await launched).newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });

				try {
					await context.addInitScript(reportFailedLoads);
					const pt = new PageTest(t, await context.newPage(), dir, expected[name], browser.name);

					assert.ok(pt.expected, `${pageWriter} wrote nothing for ${name}`);
					await pt.open();
					await body(pt, pt.expected);
					pt.noPageErrors();
				} finally {
					await context.close();
				}
			});
		}
	});
}

check('page_loads_without_errors', async (pt, want) => {
	assert.equal(await pt.page.title(), want.title);
	/* Every frame of the profile is wide enough to be drawn in 1200 pixels. */
	assert.ok(want.frames.length > 0);
	for (const name of want.frames)
		await pt.drawnFrame(name);
});

check('search_counts_matching_samples', async (pt, want) => {
	const search = pt.page.locator('#search');

	for (const s of want.searches) {
		assert.ok(s.matched > 0 && s.matched < want.total, `${s.pattern} matches ${s.matched} of ${want.total}`);
		/* Typed, as a person would: click the box, clear it, type the text. */
		await search.click();
		await pt.page.keyboard.press('Control+A');
		await pt.page.keyboard.press('Backspace');
		await pt.page.keyboard.type(s.pattern);
		await pt.waitTrue(`the search box holds ${s.pattern}`, (p) =>
			document.getElementById('search').value === p &&
			document.getElementById('matched').textContent.length > 0, s.pattern);
		const said = await pt.textOf('matched');
		if (said !== s.text)
			assert.fail(`search ${s.pattern}: the page says "${said}", expected "${s.text}"`);
	}
});

check('click_zooms_and_reset_returns', async (pt, want) => {
	const r = await pt.drawnFrame('compute');

	await pt.drawnFrame('io_wait');
	await pt.clickAt(r);
	await pt.waitTrue('the zoom line is shown', () => document.getElementById('zoominfo').textContent.length > 0);
	assertContains(await pt.textOf('zoominfo'), want.zoominfo);
	/* Zoomed: compute spans the width, and io_wait, beside it, is gone. */
	assert.equal(await pt.frameRect('io_wait'), null);
	assert.ok((await pt.drawnFrame('compute')).width > (await pt.drawnFrame('main')).width - 2);

	await pt.screenshot('flamegraph-zoomed.png', 'the zoomed page');

	await pt.page.locator('#reset').click();
	await pt.waitTrue('the zoom line is empty', () => document.getElementById('zoominfo').textContent === '');
	await pt.drawnFrame('io_wait');
});

check('icicle_toggle_puts_the_root_on_top', async (pt) => {
	let root = await pt.drawnFrame('all'), leaf = await pt.drawnFrame('lex');

	assert.ok(root.y > leaf.y, `root at y=${root.y}, leaf at y=${leaf.y}`);

	await pt.page.locator('#invert').click();
	await pt.waitTrue('the icicle box is checked', () => document.getElementById('invert').checked);
	root = await pt.drawnFrame('all');
	leaf = await pt.drawnFrame('lex');
	assert.ok(root.y < leaf.y, `root at y=${root.y}, leaf at y=${leaf.y}`);
	/* Zoom and reset work the same way up. */
	await pt.clickAt(leaf);
	await pt.waitTrue('zoomed to lex', () =>
		document.getElementById('zoominfo').textContent.indexOf('Zoomed to lex') === 0);
	assert.equal(await pt.frameRect('hash'), null);
	await pt.page.keyboard.press('Escape');
	await pt.waitTrue('the zoom line is empty', () => document.getElementById('zoominfo').textContent === '');
	await pt.drawnFrame('hash');
});

check('hostile_names_are_shown_as_text', async (pt, want) => {
	/* The page's own two script elements, its JSON data first, and no image. */
	const scripts = await pt.page.evaluate(() => {
		const s = document.getElementsByTagName('script');
		return `${s.length},${s[0].id},${s[0].type},${document.getElementsByTagName('img').length}`;
	});
	assert.equal(scripts, '2,profile-data,application/json,0');
	assert.equal(await pt.page.title(), want.title);
	for (const name of want.names) {
		const r = await pt.drawnFrame(name);

		await pt.hover(r);
		assert.equal(await pt.page.evaluate(() => document.querySelector('#tooltip .name').textContent), name);
		await pt.clickAt(r);
		await pt.waitTrue('the zoom line is shown', () => document.getElementById('zoominfo').textContent.length > 0);
		assertContains(await pt.textOf('zoominfo'), name);
		await pt.page.locator('#reset').click();
	}
	assert.equal(pt.dialogs, 0);
});

check('diff_page_colours_by_change_of_share', async (pt, want) => {
	const red = async (name) => {
		const [r, g, b] = await pt.pixelOf(name);
		if (!(r > b + 40))
			assert.fail(`${name} is drawn rgb(${r},${g},${b}), not red`);
	};

	await red('grow');
	await red('new');
	{
		const [r, g, b] = await pt.pixelOf('shrink');
		if (!(b > r + 40))
			assert.fail(`shrink is drawn rgb(${r},${g},${b}), not blue`);
	}
	{
		const [r, g, b] = await pt.pixelOf('same');
		if (Math.abs(r - b) > 8 || Math.abs(r - g) > 8)
			assert.fail(`same is drawn rgb(${r},${g},${b}), not grey`);
	}
	/* A frame only before has is not drawn, but named with its share of before. */
	assert.equal(await pt.frameRect('gone'), null);

	await pt.hover(await pt.drawnFrame('grow'));
	await pt.screenshot('flamegraph-diff.png', 'the diff page');
	const tooltip = await pt.textOf('tooltip');
	for (const s of want.grow_tooltip)
		assertContains(tooltip, s);

	await pt.hover(await pt.drawnFrame('main'));
	assertContains(await pt.textOf('tooltip'), want.main_tooltip);

	const diffinfo = await pt.textOf('diffinfo');
	for (const s of want.diffinfo)
		assertContains(diffinfo, s);
	const legend = await pt.textOf('legend');
	assertContains(legend, 'grew');
	assertContains(legend, 'shrank');
});

check('thread_and_state_are_named', async (pt, want) => {
	for (const [frame, lines] of [['poll', want.poll_tooltip], ['compute', want.compute_tooltip]]) {
		await pt.hover(await pt.drawnFrame(frame));
		const tooltip = await pt.textOf('tooltip');
		for (const s of lines)
			assertContains(tooltip, s);
	}
	/* The legend gives each state's share of the whole profile. */
	assertContains(await pt.textOf('legend'), want.legend);
});

check('events_page_shows_one_event_at_a_time', async (pt, want) => {
	assert.equal(await pt.page.title(), want.firstTitle);
	await pt.drawnFrame(want.firstFrame);
	assert.equal(await pt.frameRect(want.secondFrame), null);
	/* Chosen in the page: it loads again with the event named in its address. */
	await pt.page.locator('#event').selectOption(want.secondEvent);
	await pt.waitTrue('the page shows the second event', (t) => document.title === t, want.secondTitle);
	pt.noPageErrors();
	assert.ok(pt.page.url().endsWith(`#${want.secondEvent}`), pt.page.url());
	await pt.drawnFrame(want.secondFrame);
	assert.equal(await pt.frameRect(want.firstFrame), null);
	assertContains(await pt.textOf('summary'), want.secondTotal);
	assert.equal(await pt.page.evaluate(() => document.getElementById('event').value), want.secondEvent);
});

/* The colour of the timeline's canvas at viewport point p, as [r, g, b]. */
function timelinePixel(pt, p) {
	return pt.page.evaluate((q) => {
		const c = document.getElementById('timeline'), b = c.getBoundingClientRect(), k = c.width / b.width;
		const d = c.getContext('2d').getImageData(Math.floor((q.x - b.left) * k), Math.floor((q.y - b.top) * k), 1, 1).data;
		return [d[0], d[1], d[2]];
	}, p);
}

const timelinePoint = (pt, s, row) => pt.page.evaluate(([t, r]) => flamegraphPage.timelinePoint(t, r), [s, row]);

/* The element the browser would give a click at viewport point p: its id, or its tag. */
const elementAt = (pt, p) => pt.page.evaluate((q) => {
	const el = document.elementFromPoint(q.x, q.y);
	return el ? el.id || el.tagName : null;
}, p);

check('deep_page_shows_timeline_and_root', async (pt, want) => {
	const size = await pt.page.evaluate(() => [document.documentElement.scrollHeight, window.innerHeight]);
	assert.ok(size[0] > size[1] * 1.5, `the page is ${size[0]} pixels tall in a window of ${size[1]}: not deep enough`);

	/* Opened at the root, which is drawn and not under the header. */
	const root = await pt.drawnFrame('all');
	assert.ok(root.y + root.height <= size[1], `the root is drawn at y=${root.y}, below the window`);
	assert.equal(await elementAt(pt, { x: root.x + root.width / 2, y: root.y + root.height / 2 }), 'canvas');

	/* The timeline's bars and its busiest row are in view at once. */
	for (const row of [-1, 0]) {
		const p = await timelinePoint(pt, want.seconds / 2, row);
		assert.ok(p.y > 0 && p.y < size[1], `the timeline's row ${row} is at y=${p.y}, out of the window`);
		assert.equal(await elementAt(pt, p), 'timeline', `row ${row}`);
	}
	/* The rows past the box's height scroll inside it, and leave the flame graph room. */
	const box = await pt.page.evaluate(() => {
		const b = document.getElementById('timescroll');
		return [b.scrollHeight, b.clientHeight];
	});
	assert.ok(box[0] > box[1] && box[1] <= size[1] * 0.4 + 1, `the timeline box is ${box[1]} of ${box[0]} pixels`);
	await pt.screenshot('flamegraph-deep.png', 'a deep page as it opens');
});

check('timeline_selects_a_range', async (pt, want) => {
	const purple = ([r, g, b]) => r > g + 50 && b > g + 50;

	/* One row per thread, the busiest first. */
	assert.deepEqual(await pt.page.evaluate(() => flamegraphPage.timelineRows()), want.rows);
	await pt.drawnFrame(want.first);
	await pt.drawnFrame(want.second);

	/* A search marks when the matching frame ran: the first half, not the second. */
	await pt.page.locator('#search').click();
	await pt.page.keyboard.type(want.first);
	await pt.waitTrue('the search has matched', () => document.getElementById('matched').textContent.length > 0);
	const early = await timelinePixel(pt, await timelinePoint(pt, want.from / 2, -1));
	const late = await timelinePixel(pt, await timelinePoint(pt, (want.from + want.to) / 2, -1));
	assert.ok(purple(early), `the timeline at ${want.from / 2} s is rgb(${early}), not marked`);
	assert.ok(!purple(late), `the timeline at ${(want.from + want.to) / 2} s is rgb(${late}), marked`);
	await pt.page.keyboard.press('Control+A');
	await pt.page.keyboard.press('Backspace');
	await pt.waitTrue('the search is cleared', () => document.getElementById('matched').textContent === '');

	/* Drag across the second half, as a person would. */
	const a = await timelinePoint(pt, want.from, -1), b = await timelinePoint(pt, want.to, -1);
	await pt.page.mouse.move(a.x + 1, a.y);
	await pt.page.mouse.down();
	await pt.page.mouse.move(b.x - 1, b.y, { steps: 8 });
	await pt.page.mouse.up();
	await pt.waitTrue('the range is described', (t) => document.getElementById('timeinfo').textContent === t,
		want.timeinfo);
	assert.equal(await pt.frameRect(want.first), null);
	await pt.drawnFrame(want.second);
	await pt.screenshot('flamegraph-timeline.png', 'a range selected on the timeline');

	/* The address keeps the range, and a page opened at it shows the same. */
	const url = pt.page.url();
	assert.ok(url.endsWith(want.address), url);
	const again = await pt.page.context().newPage();
	const other = new PageTest(pt.t, again, pt.dir, pt.expected, pt.browserName);
	await again.goto(url, { waitUntil: 'load' });
	other.noPageErrors();
	await other.waitTrue('the range is restored', (t) => document.getElementById('timeinfo').textContent === t,
		want.timeinfo);
	assert.equal(await other.frameRect(want.first), null);
	await other.drawnFrame(want.second);

	/* Back to the whole recording: both phases, and the address without a range. */
	await pt.page.locator('#timeclear').click();
	await pt.waitTrue('the whole recording is shown', () =>
		document.getElementById('timeinfo').textContent.indexOf('Whole recording') === 0);
	await pt.drawnFrame(want.first);
	assert.ok(!pt.page.url().includes('#'), pt.page.url());
	other.noPageErrors();
});

for (const browser of BROWSERS)
	browserSuite(browser);
