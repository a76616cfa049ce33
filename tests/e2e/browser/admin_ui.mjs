// Drives Debian's Chromium through the admin catalog of a running wheelhouse. Run by
// tests/e2e/test_admin_ui.py as: node admin_ui.mjs SCENARIO CONFIG.json
// CONFIG: {base_url, admin_token, artifacts, ...scenario fields}. Prints one JSON object of
// what it saw on stdout; any failed expectation exits non-zero with the reason on stderr.

import {readFileSync} from 'node:fs';
import {join} from 'node:path';
import {chromium} from 'playwright-core';

const [scenario, configPath] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configPath, 'utf8'));
const base = config.base_url.replace(/\/$/, '');

function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

function expectEqual(actual, expected, message) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`expectation failed: ${message}\n  expected ${e}\n  actual   ${a}`);
}

// A page that fails the test on any script error, dialog or CSP violation.
async function openPage(browser, options = {}) {
  const context = await browser.newContext({viewport: {width: 1280, height: 900}, ...options});
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('dialog', async (dialog) => {
    problems.push(`a dialog opened: ${dialog.type()} ${dialog.message()}`);
    await dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && !/404|Failed to load resource/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  return {context, page, problems};
}

async function shot(page, name) {
  await page.screenshot({path: join(config.artifacts, `${name}.png`), fullPage: true});
}

async function setToken(page, secret) {
  await page.fill('#token-input', secret);
  await page.click('#token-save');
  await page.waitForSelector('#token-forget:not([hidden])');
}

async function noticeText(page) {
  await page.waitForSelector('#notice:not([hidden])');
  return (await page.textContent('#notice-text')).trim();
}

// Clicks, and returns the notice the click brings (an earlier notice is hidden first).
async function clickForNotice(page, selector) {
  await page.evaluate(() => { document.getElementById('notice').hidden = true; });
  await page.click(selector);
  return noticeText(page);
}

// The matrix of one release as {python: {family: [filenames]}}.
async function readMatrix(page, version) {
  return page.$eval(`table.matrix[data-version="${version}"]`, (table) => {
    const families = [...table.querySelectorAll('thead th')].slice(1).map((th) => th.dataset.family);
    const out = {};
    for (const row of table.querySelectorAll('tbody tr')) {
      const python = row.querySelector('th').textContent;
      out[python] = {};
      [...row.querySelectorAll('td')].forEach((cell, index) => {
        const links = [...cell.querySelectorAll('a')].map((a) => decodeURIComponent(a.getAttribute('href').replace('#/file/', '')));
        if (links.length) out[python][families[index]] = links;
      });
    }
    return out;
  });
}

// Each column head of one release as {family: [what it shows under the family, link or text]}.
async function readHeads(page, version) {
  return page.$eval(`table.matrix[data-version="${version}"]`, (table) => Object.fromEntries(
    [...table.querySelectorAll('thead th[data-family]')].map((th) => [th.dataset.family,
      [...th.querySelectorAll('.selector')].map((item) => item.getAttribute('href') ?? item.textContent)])));
}

async function projectRows(page) {
  return page.$$eval('table.projects tbody tr', (rows) => rows.map((row) => row.dataset.project));
}

// Chooses a filter value and waits for the list to show `expected` (project names, in order).
async function filterTo(page, selector, value, expected) {
  await page.selectOption(selector, value);
  await page.waitForFunction((names) => {
    const rows = [...document.querySelectorAll('table.projects tbody tr')];
    const empty = document.querySelector('main .table-wrap .empty');
    if (names.length === 0) return rows.length === 0 && empty !== null;
    return rows.length === names.length && rows.every((row, i) => row.dataset.project === names[i]);
  }, expected, {timeout: 10000});
  return projectRows(page);
}

const scenarios = {
  // Search finds a project; the matrix shows the right cells; a cell gives its install line;
  // a hostile summary shows as text; a screenshot of each page.
  async browse(browser) {
    const {page, problems} = await openPage(browser);
    const seen = {};
    await page.goto(`${base}/`);
    await page.waitForSelector('table.projects');
    await shot(page, 'projects');

    await page.fill('#project-search', config.search_typed);
    await page.waitForFunction((expected) => {
      const rows = [...document.querySelectorAll('table.projects tbody tr')];
      return rows.length === expected.length && rows.every((row, i) => row.dataset.project === expected[i]);
    }, config.search_expected, {timeout: 10000});
    seen.search_rows = await page.$$eval('table.projects tbody tr', (rows) => rows.map((row) => row.dataset.project));
    seen.search_count = await page.textContent('#project-count');
    await shot(page, 'projects-search');

    await page.fill('#project-search', 'no-such-thing-anywhere');
    await page.waitForSelector('text=No project matches.');

    await page.goto(`${base}/#/project/${config.matrix_project}`);
    await page.waitForSelector(`table.matrix[data-version="${config.matrix_version}"]`);
    seen.versions = await page.$$eval('table.matrix', (tables) => tables.map((t) => t.dataset.version));
    seen.matrix = await readMatrix(page, config.matrix_version);
    seen.heads = await readHeads(page, config.matrix_version);
    seen.older_matrix = await readMatrix(page, config.older_version);
    seen.older_heads = await readHeads(page, config.older_version);
    // A release's sdists, on their own line above its matrix (issue 16 item 1).
    seen.sdist_lines = await page.$$eval('section.release', (sections) => sections.map((section) =>
      [section.querySelector('h2').firstChild.textContent, section.querySelector('p.sdists')?.textContent ?? null]));
    seen.summary = await page.textContent('#project-summary');
    seen.requires_python = await page.textContent('#requires-python');

    const [python, family] = config.install_cell;
    const cell = page.locator(`table.matrix[data-version="${config.matrix_version}"] td[data-python="${python}"][data-family="${family}"]`);
    await cell.locator('button.pick').first().click();
    await page.waitForSelector('#install:not([hidden])');
    seen.install_lines = await page.$$eval('#install .command code', (codes) => codes.map((code) => code.textContent));
    seen.project_text = await page.textContent('main');
    await shot(page, 'project');

    await cell.locator('a').first().click();
    await page.waitForSelector('#file-name');
    seen.file_name = await page.textContent('#file-name');
    seen.file_sha256 = await page.textContent('#file-sha256');
    seen.file_variant = await page.textContent('#file-variant');
    seen.download_total = await page.textContent('#download-total');
    seen.chart_bars = await page.$$eval('svg.chart rect', (bars) => bars.length);
    seen.file_text = await page.textContent('main');
    await shot(page, 'file');

    // The hostile METADATA: every place it appears holds it as text, and nothing ran.
    await page.goto(`${base}/#/project/${config.hostile_project}`);
    await page.waitForSelector('#project-summary');
    seen.hostile_summary = await page.textContent('#project-summary');
    seen.hostile_images = await page.$$eval('main img', (images) => images.length);
    await shot(page, 'project-hostile');
    await page.click('table.matrix td.cell a');
    await page.waitForSelector('#file-metadata');
    seen.hostile_file_summary = await page.textContent('#file-summary');
    seen.hostile_metadata = await page.textContent('#file-metadata');
    seen.hostile_file_images = await page.$$eval('main img', (images) => images.length);
    await page.goto(`${base}/#/?q=${config.hostile_project}`);
    await page.waitForSelector('table.projects tbody tr');
    seen.hostile_list_images = await page.$$eval('main img', (images) => images.length);
    seen.pwned = await page.evaluate(() => window.__pwned === true);

    // The builds filters: which projects have a cu130 build, which lack one, for a GPU.
    await page.goto(`${base}/#/`);
    await page.waitForSelector('table.projects tbody tr');
    await page.waitForSelector('#filter-cuda option[value="cu130"]', {state: 'attached'});
    seen.filter_words = await page.$$eval('#project-filters select[data-axis]', (selects) => Object.fromEntries(
      selects.map((select) => [select.dataset.axis, [...select.options].slice(1).map((option) => option.value)])));
    seen.with_cu130 = await filterTo(page, '#filter-cuda', 'cu130', config.with_cu130);
    // One build must have all that is named: flash-attn's torch2.8 build is for CUDA 12.8.
    seen.with_cu130_torch28 = await filterTo(page, '#filter-torch', 'torch2.8', config.with_cu130_torch28);
    await page.selectOption('#filter-torch', '');
    seen.with_cu130_sm120 = await filterTo(page, '#filter-sm', 'sm120', config.with_cu130_sm120);
    await shot(page, 'projects-filter-has');
    await page.selectOption('#filter-sm', '');
    seen.without_cu130 = await filterTo(page, '#filter-lacks', '1', config.without_cu130);
    seen.without_count = await page.textContent('#project-count');
    seen.filter_address = await page.evaluate(() => location.hash);
    await shot(page, 'projects-filter-lacks');
    // The address keeps the filters: a reload shows the same list.
    await page.reload();
    await page.waitForSelector('table.projects tbody tr');
    seen.reloaded = await projectRows(page);
    // The kind of file: which projects ship an sdist, which have none, which have no wheel.
    await page.goto(`${base}/#/`);
    await page.waitForSelector('#filter-kind option[value="sdist"]', {state: 'attached'});
    seen.with_sdist = await filterTo(page, '#filter-kind', 'sdist', config.with_sdist);
    seen.without_sdist = await filterTo(page, '#filter-lacks', '1', config.without_sdist);
    seen.without_wheel = await filterTo(page, '#filter-kind', 'wheel', config.without_wheel);
    seen.without_wheel_count = await page.textContent('#project-count');
    await page.goto(`${base}/#/project/${config.without_wheel[0]}`);
    await page.waitForSelector('section.release p.sdists');
    seen.sdist_only_line = await page.textContent('section.release p.sdists');
    seen.sdist_only_tables = await page.$$eval('table.matrix', (tables) => tables.length);
    await page.goto(`${base}/#/project/${config.matrix_project}`);
    await page.waitForSelector(`table.matrix[data-version="${config.matrix_version}"]`);
    await page.locator(`table.matrix[data-version="${config.matrix_version}"]`).screenshot(
      {path: join(config.artifacts, 'matrix.png')});

    // Phone width and the dark theme, for the record.
    await page.setViewportSize({width: 390, height: 844});
    await page.goto(`${base}/#/project/${config.matrix_project}`);
    await page.waitForSelector('table.matrix');
    seen.phone_overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await shot(page, 'project-phone');
    await page.goto(`${base}/#/?cuda=cu130&lacks=1`);
    await page.waitForSelector('table.projects tbody tr');
    seen.phone_list_overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await shot(page, 'projects-filter-phone');
    await page.emulateMedia({colorScheme: 'dark'});
    await page.goto(`${base}/#/`);
    await page.waitForSelector('table.projects');
    seen.dark_background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await shot(page, 'projects-dark');

    seen.problems = problems;
    return seen;
  },

  // Yank refused without a token, done with one; a stale page acting on a deleted file; the
  // tokens and audit page.
  async curate(browser) {
    const {page, problems} = await openPage(browser);
    const seen = {};
    const fileUrl = `${base}/#/file/${encodeURIComponent(config.yank_file)}`;

    await page.goto(fileUrl);
    await page.waitForSelector('#yank-button');
    await page.fill('#yank-reason', 'broken build');
    seen.refused = await clickForNotice(page, '#yank-button');

    await setToken(page, config.admin_token);
    await page.goto(fileUrl);
    await page.waitForSelector('#yank-button');
    await page.fill('#yank-reason', 'broken build');
    seen.yanked_notice = await clickForNotice(page, '#yank-button');
    await page.waitForSelector('#yanked-note');
    seen.yanked_note = await page.textContent('#yanked-note');
    seen.history = await page.$$eval('.history li', (items) => items.map((item) => item.textContent));
    await shot(page, 'file-yanked');

    // A page loaded before someone else deleted its file.
    await page.goto(`${base}/#/file/${encodeURIComponent(config.stale_file)}`);
    await page.waitForSelector('#delete-button');
    const deleted = await page.evaluate(async ([name, secret]) => {
      const response = await fetch(`/api/v1/files/${encodeURIComponent(name)}`,
        {method: 'DELETE', headers: {Authorization: `Bearer ${secret}`}});
      return response.status;
    }, [config.stale_file, config.admin_token]);
    expectEqual(deleted, 200, 'the delete behind the page\'s back');
    await page.click('#delete-button');
    seen.stale_notice = await clickForNotice(page, '#delete-confirm');
    seen.stale_page_still_there = await page.isVisible('#file-name');
    await page.fill('#yank-reason', 'x');
    seen.stale_yank_notice = await clickForNotice(page, '#yank-button');
    await shot(page, 'file-stale');
    await page.goto(`${base}/#/admin`);
    await page.goto(`${base}/#/file/${encodeURIComponent(config.stale_file)}`);
    await page.waitForSelector('.error-text');
    seen.stale_open = await page.textContent('.error-text');

    // Tokens and the audit log.
    await page.goto(`${base}/#/admin`);
    await page.waitForSelector('#token-create');
    await page.fill('#new-token-name', 'ci-from-the-page');
    await page.selectOption('#new-token-scope', 'upload');
    seen.create_notice = await clickForNotice(page, '#token-create button[type=submit]');
    await page.waitForSelector('#new-token-secret:not([hidden]) code');
    seen.new_secret = await page.textContent('#new-token-secret code');
    await page.goto(`${base}/#/`);
    await page.goto(`${base}/#/admin`);
    await page.waitForSelector('tr[data-token="ci-from-the-page"]');
    seen.secret_shown_again = (await page.textContent('main')).includes(seen.new_secret);
    seen.tokens = await page.$$eval('table.tokens tbody tr', (rows) => rows.map((row) => row.dataset.token));
    seen.audit = await page.$$eval('table.audit tbody tr', (rows) => rows.map((row) =>
      [...row.querySelectorAll('td')].slice(1, 4).map((cell) => cell.textContent)));
    seen.audit_count = await page.textContent('#audit-count');
    await page.selectOption('#audit-action', 'yank');
    await page.waitForFunction(() => [...document.querySelectorAll('table.audit tbody tr')]
      .every((row) => row.querySelectorAll('td')[2].textContent === 'yank'));
    seen.audit_yanks = await page.$$eval('table.audit tbody tr', (rows) => rows.map((row) =>
      [...row.querySelectorAll('td')].slice(1, 4).map((cell) => cell.textContent)));
    await page.selectOption('#audit-action', '');
    await page.waitForFunction((total) => document.getElementById('audit-count').textContent === total, seen.audit_count);
    // A short hash as the log shows it finds its file's upload.
    const short = await page.$eval('table.audit code.hash.short', (code) => [code.textContent, code.title]);
    seen.audit_short_hash = short;
    await page.fill('#audit-search', short[0]);
    await page.waitForFunction((hash) => {
      const rows = [...document.querySelectorAll('table.audit tbody tr')];
      return rows.length > 0 && rows.every((row) => row.querySelector('code.hash.short')?.title === hash);
    }, short[1]);
    seen.audit_by_hash = await page.$$eval('table.audit tbody tr', (rows) => rows.map((row) =>
      row.querySelectorAll('td')[2].textContent));
    await page.fill('#audit-search', '');
    await page.waitForFunction((total) => document.getElementById('audit-count').textContent === total, seen.audit_count);
    await shot(page, 'admin');
    seen.revoke_notice = await clickForNotice(page, 'tr[data-token="ci-from-the-page"] button');

    // Without admin scope the admin page shows the API's refusal.
    await page.click('#token-forget');
    await setToken(page, config.upload_token);
    await page.goto(`${base}/#/admin`);
    await page.waitForSelector('#tokens .error-text');
    seen.low_scope = await page.textContent('#tokens .error-text');

    seen.problems = problems;
    return seen;
  },

  // A private index: the page and its files load without a token, its reads ask for one, and
  // with a token entered it shows what that token may read, and no more.
  async private(browser) {
    const {page, problems} = await openPage(browser);
    const seen = {};
    const projectRows = () => page.$$eval('table.projects tbody tr', (rows) => rows.map((row) => row.dataset.project));
    await page.goto(`${base}/`);
    await page.waitForSelector('main .error-text');
    seen.heading = await page.textContent('main h1');
    seen.refusal = await page.textContent('main .error-text');

    await setToken(page, config.read_token);
    await page.waitForSelector('table.projects tbody tr');
    seen.projects = await projectRows();
    await page.goto(`${base}/#/project/${config.project}`);
    await page.waitForSelector('table.matrix');
    seen.versions = await page.$$eval('table.matrix', (tables) => tables.map((t) => t.dataset.version));
    await page.click('table.matrix td.cell a');
    await page.waitForSelector('#file-name');
    seen.file_name = await page.textContent('#file-name');
    seen.metadata = await page.textContent('#file-metadata');

    await page.click('#token-forget');
    await setToken(page, config.limited_token);
    await page.goto(`${base}/#/`);
    await page.waitForFunction((expected) => {
      const rows = [...document.querySelectorAll('table.projects tbody tr')];
      return rows.length === expected.length && rows.every((row, i) => row.dataset.project === expected[i]);
    }, config.limited_expected, {timeout: 10000});
    seen.limited_projects = await projectRows();
    seen.limited_count = await page.textContent('#project-count');
    await page.goto(`${base}/#/project/${config.project}`);
    await page.waitForSelector('main .error-text');
    seen.limited_heading = await page.textContent('main h1');
    seen.limited_refusal = await page.textContent('main .error-text');
    await shot(page, 'private-limited');

    seen.problems = problems;
    return seen;
  },
};

// The PEP 825 columns of a release name each label's properties in their head; a build's file
// page names its label and properties.
async function readPropertyHeads(page, version) {
  return page.$eval(`table.matrix[data-version="${version}"]`, (table) => Object.fromEntries(
    [...table.querySelectorAll('thead th[data-family]')].map((th) => [th.dataset.family,
      [...th.querySelectorAll('ul.properties li')].map((item) => item.textContent)])));
}

scenarios.pep825 = async function pep825(browser) {
  const {page, problems} = await openPage(browser);
  const seen = {};
  await page.goto(`${base}/#/project/${config.project}`);
  await page.waitForSelector(`table.matrix[data-version="${config.version}"]`);
  seen.matrix = await readMatrix(page, config.version);
  seen.heads = await readHeads(page, config.version);
  seen.properties = await readPropertyHeads(page, config.version);
  await page.locator(`table.matrix[data-version="${config.version}"]`).screenshot(
    {path: join(config.artifacts, 'pep825-matrix.png')});
  await shot(page, 'pep825-project');

  await page.click(`table.matrix a[href="#/file/${encodeURIComponent(config.file)}"]`);
  await page.waitForSelector('#file-pep825');
  seen.file_name = await page.textContent('#file-name');
  seen.file_label = await page.textContent('#file-pep825 code');
  seen.file_properties = await page.$$eval('#file-pep825 li', (items) => items.map((item) => item.textContent));
  await shot(page, 'pep825-file');

  await page.goto(`${base}/#/file/${encodeURIComponent(config.null_file)}`);
  await page.waitForSelector('#file-pep825');
  seen.null_text = await page.textContent('#file-pep825');
  seen.text = await page.textContent('main');
  seen.problems = problems;
  return seen;
};

// A project's trusted publishers: an upload token is refused with the API's message; an admin
// adds one with the form, sees it in the table, and removes it.
scenarios.publishers = async (browser) => {
  const {page, problems} = await openPage(browser);
  const seen = {};
  await page.goto(`${base}/#/project/${config.project}`);
  await page.waitForSelector('#publishers-box');
  await setToken(page, config.upload_token);
  await page.click('#publishers-box summary');
  await page.waitForSelector('#publishers .error-text');
  seen.refusal = (await page.textContent('#publishers .error-text')).trim();

  await setToken(page, config.admin_token);
  await page.reload();
  await page.waitForSelector('#publishers-box');
  // The box stays open across redraws of the page; open it if this load did not.
  if (!await page.$eval('#publishers-box', (box) => box.open)) await page.click('#publishers-box summary');
  await page.waitForSelector('#publisher-add');
  seen.audience = (await page.textContent('#publishers p.muted code')).trim();
  seen.explanation = (await page.textContent('#publishers p.muted')).trim();
  await page.fill('#new-publisher-repository', 'Dao-AILab/flash-attention');
  await page.fill('#new-publisher-owner-id', '77001');
  await page.fill('#new-publisher-workflow', 'build-cu130.yml');
  await page.fill('#new-publisher-labels', 'cu130*');
  seen.added_notice = await clickForNotice(page, '#publisher-add button[type="submit"]');
  await page.waitForSelector('#publishers table.publishers');  // the page redraws with the box still open
  seen.rows = await page.$$eval('#publishers tbody tr', (rows) => rows.map((row) =>
    [...row.querySelectorAll('td')].slice(0, 7).map((cell) => cell.textContent.trim())));
  await shot(page, 'publishers');
  seen.removed_notice = await clickForNotice(page, '#publishers tbody tr button.danger-outline');
  await page.waitForSelector('#publishers-empty');
  seen.problems = problems;
  return seen;
};

// The Upstream page: what /api/v1/upstream says, as tables; or, with no upstream, that this
// index serves its own projects alone.
scenarios.upstream = async (browser) => {
  const {page, problems} = await openPage(browser);
  const seen = {};
  await page.goto(`${base}/#/projects`);
  await page.click('nav a[href="#/upstream"]');
  await page.waitForSelector('#upstream-none, #upstream-table');
  const cells = (selector) => page.$$eval(selector, (rows) => rows.map((row) =>
    [...row.querySelectorAll('th, td')].map((cell) => cell.textContent.trim())));
  if (await page.$('#upstream-none')) {
    seen.none = (await page.textContent('#upstream-none')).trim();
  } else {
    seen.rule = (await page.textContent('#upstream-rule')).trim();
    seen.upstreams = await cells('#upstream-table tbody tr');
    seen.routes = await page.$$eval('#route-list li', (items) => items.map((item) => item.textContent.trim()));
    seen.reserved = await cells('#reserved-table tbody tr');
    seen.kept = await cells('#kept-table tbody tr');
    seen.kept_totals = (await page.textContent('#kept-totals')).trim();
    await shot(page, 'upstream');
  }
  seen.problems = problems;
  return seen;
};

const browser = await chromium.launch({executablePath: config.chromium ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage']});
try {
  const seen = await scenarios[scenario](browser);
  process.stdout.write(`${JSON.stringify(seen)}\n`);
} catch (failure) {
  process.stderr.write(`${failure.stack ?? failure}\n`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
