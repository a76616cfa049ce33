// One project: summary and requires-python from its newest METADATA, its status (PEP 792), and
// per release (newest first, PEP 440) the variant matrix, each column headed by its variant
// index; a click on a cell gives the exact pip and uv lines for that build.

import {api, enc} from './api.mjs';
import {add, clear, copyButton, el, formatBytes, timeElement} from './dom.mjs';
import {installLines, layoutMatrix} from './matrix.mjs';
import {act, refresh} from './notice.mjs';
import {publishersBox} from './publishers.mjs';

const STATUSES = ['active', 'archived', 'quarantined', 'deprecated'];

export async function showProject(target, name, stillCurrent) {
  const project = await api(`projects/${enc(name)}`);
  if (!stillCurrent()) return;
  const install = el('section', {class: 'install', id: 'install', hidden: true, 'aria-live': 'polite'});

  add(target, 
    el('p', {class: 'crumbs'}, el('a', {href: '#/'}, 'Projects'), ' / ', project.name),
    el('h1', null, project.display_name, ' ',
      el('span', {class: `status status-${project.status}`, id: 'project-status'}, project.status)),
    project.status_reason ? el('p', {class: 'muted', id: 'status-reason'}, project.status_reason) : null,
    el('p', {class: 'summary', id: 'project-summary'}, project.summary ?? 'No summary in METADATA.'),
    el('dl', {class: 'facts'},
      el('dt', null, 'Latest'), el('dd', null, project.latest_version || '—'),
      el('dt', null, 'Requires-Python'), el('dd', {id: 'requires-python'}, project.requires_python ?? 'any'),
      el('dt', null, 'Files'), el('dd', null, `${project.file_count} (${formatBytes(project.total_size)})`),
      el('dt', null, 'Last upload'), el('dd', null, timeElement(project.last_upload)),
      el('dt', null, 'Index'), el('dd', null, el('a', {href: `/simple/${enc(project.name)}/`}, `/simple/${project.name}/`))),
    statusForm(project),
    publishersBox(project.name),
    install,
  );

  if (project.versions.length === 0) add(target, el('p', {class: 'empty'}, 'This project has no files left.'));
  for (const release of project.versions) {
    add(target, releaseSection(project, release, install));
  }
}

function releaseSection(project, release, install) {
  const {rows, columns, cells, sdists} = layoutMatrix(release.builds);
  const table = el('table', {class: 'matrix', dataset: {version: release.version}},
    el('thead', null, el('tr', null, el('th', {scope: 'col'}, 'Python'),
      columns.map((column) => columnHead(project, column)))),
    el('tbody', null, rows.map((row) => el('tr', null, el('th', {scope: 'row'}, row),
      columns.map(({label}) => {
        const builds = cells.get(`${row}\u0000${label}`) ?? [];
        if (builds.length === 0) return el('td', {class: 'cell-empty'}, '');
        return el('td', {class: 'cell', dataset: {python: row, family: label}},
          builds.map((build) => el('div', {class: build.yanked === false ? 'build' : 'build yanked'},
            el('a', {href: `#/file/${enc(build.filename)}`, title: build.filename}, build.platform_tag),
            build.yanked === false ? null : el('span', {class: 'badge'}, 'yanked'),
            el('button', {type: 'button', class: 'pick', title: `pip install line for ${build.filename}`,
              on: {click: () => showInstall(install, project, build)}}, 'install'))));
      })))));
  return el('section', {class: 'release'},
    el('h2', null, release.version, el('span', {class: 'muted small'}, ` ${release.builds.length} ${release.builds.length === 1 ? 'file' : 'files'}`)),
    sdistLine(sdists, columns),
    columns.length > 0 ? el('div', {class: 'table-wrap'}, table) : null);
}

// A release's sdists, apart from the matrix: they have no Python or variant. The variant indexes
// of a project whose builds carry a variant leave them out, so pip never compiles one there. A
// release of sdists alone says so: pip builds it on every machine.
function sdistLine(sdists, columns) {
  if (sdists.length === 0) return null;
  const variants = columns.some((column) => column.selectors.length > 0);
  const where = columns.length === 0
    ? 'no wheel in this release: pip builds it from this sdist on every machine'
    : variants ? 'in /simple/ only: the variant indexes leave it out, so pip never compiles it where no build fits'
      : 'in every index';
  return el('p', {class: 'sdists', dataset: {packagetype: 'sdist'}},
    el('span', {class: 'family'}, 'sdist'), ' ',
    sdists.map((build) => el('span', {class: build.yanked === false ? 'build' : 'build yanked'},
      el('a', {href: `#/file/${enc(build.filename)}`}, build.filename),
      build.yanked === false ? null : el('span', {class: 'badge'}, 'yanked'), ' ')),
    el('span', {class: 'selector muted'}, where));
}

// A column's family and, beneath it, the variant index that serves it: one look answers "which
// index do I give pip for this build?". A build that names no machine (a pure wheel, or a
// platform build without a label) is listed by every variant index.
function columnHead(project, column) {
  const pageOf = (selector) => `/variants/${selector}/simple/${enc(project.name)}/`;
  let indexes;
  if (column.selectors.length > 0) {
    indexes = column.selectors.map((selector) =>
      el('a', {class: 'selector', href: pageOf(selector), title: `the variant index ${pageOf(selector)}`},
        el('code', null, selector)));
  } else {
    indexes = el('span', {class: 'selector muted'}, 'in every index');
  }
  // A PEP 825 column names its label's properties, which say more than the label.
  const properties = column.pep825 === null ? null
    : el('ul', {class: 'properties muted small'}, column.pep825.properties.length === 0
      ? el('li', null, 'no properties (the null variant)')
      : column.pep825.properties.map((property) => el('li', null, property)));
  return el('th', {scope: 'col', dataset: {family: column.label}},
    el('span', {class: 'family'}, column.label), properties, indexes);
}

function showInstall(install, project, build) {
  const lines = installLines(project.name, build, location.origin);
  const line = (label, text) => el('div', {class: 'command'},
    el('span', {class: 'command-label'}, label), el('code', null, text), copyButton(() => text));
  add(clear(install), 
    el('h2', null, 'Install ', el('a', {href: `#/file/${enc(build.filename)}`}, build.filename)),
    line('pip', lines.pip), line('uv', lines.uv),
    build.yanked === false ? null
      : el('p', {class: 'warning'}, 'This file is yanked: pip installs it only when pinned exactly, as here.'));
  install.hidden = false;
  install.scrollIntoView({block: 'nearest'});
}

function statusForm(project) {
  const select = el('select', {id: 'status-select', 'aria-label': 'New status'},
    STATUSES.map((status) => el('option', {value: status, selected: status === project.status}, status)));
  const reason = el('input', {type: 'text', id: 'status-reason-input', placeholder: 'reason (optional)',
    value: project.status_reason ?? '', maxLength: 1000});
  const form = el('form', {class: 'curation', id: 'status-form'},
    el('span', null, 'Status (PEP 792): '), select, reason, el('button', {type: 'submit'}, 'Set status'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const done = await act(`${project.name} is now ${select.value}`, () => api(`projects/${enc(project.name)}/status`,
      {method: 'PUT', body: {status: select.value, reason: reason.value || null}}));
    if (done) refresh();
  });
  return el('details', {class: 'admin-box'}, el('summary', null, 'Curate (admin token)'), form);
}
