// Where each name comes from: the upstream indexes this index passes through, which upstream a
// variant index uses for which names, the names owned before their first upload, and the
// upstream files kept here. Read from /api/v1/upstream.

import {api} from './api.mjs';
import {add, el, formatBytes, safeLink, timeElement} from './dom.mjs';

export async function showUpstream(target, stillCurrent) {
  const overview = await api('upstream');
  if (!stillCurrent()) return;
  add(target, el('h1', null, 'Upstream indexes'));
  if (overview.upstreams.length === 0) {
    add(target, el('p', {class: 'empty', id: 'upstream-none'},
      'No upstream is configured (--upstream): this index serves its own projects and nothing else.'));
    return;
  }
  add(target,
    el('p', {id: 'upstream-rule'}, 'A name in this index\'s catalog (it has, or had, files here) or under a ',
      'reserved name is served from this index alone, on every page; every other name comes from the upstream ',
      'its route names. ',
      overview.files === 'link' ? 'Upstream files are linked where upstream keeps them.'
        : 'Upstream files are fetched on first request, checked against upstream\'s sha256, and kept here.',
      overview.offline ? ' This index runs offline: only what is kept is served.' : ''),
    el('section', {id: 'upstreams'}, el('h2', null, 'Upstreams'), upstreamTable(overview)),
    el('section', {id: 'upstream-routes'}, el('h2', null, 'Routes'), routeList(overview.routes)),
    el('section', {id: 'reserved'}, el('h2', null, 'Reserved names'), reservedTable(overview.reserved)),
    el('section', {id: 'kept'}, el('h2', null, 'Upstream projects with files kept here'),
      keptTable(overview.kept_projects, overview.kept)));
}

function table(id, headings, rows) {
  return el('div', {class: 'table-wrap'}, el('table', {id},
    el('thead', null, el('tr', null, headings.map((heading) => el('th', {scope: 'col'}, heading)))),
    el('tbody', null, rows)));
}

// Pages answered from memory over all page requests: the share upstream was not asked.
function hitRatio(pages) {
  const asked = pages.from_memory + pages.from_network;
  return asked === 0 ? '—' : `${Math.round((100 * pages.from_memory) / asked)} %`;
}

function upstreamTable(overview) {
  const age = `fresh for ${overview.max_age_seconds} s`;
  return table('upstream-table', ['Name', 'URL', 'Pages from memory', 'Fetched', 'Served stale', 'Failed', 'Hit ratio'],
    overview.upstreams.map((upstream) => {
      const pages = upstream.pages ?? {from_memory: 0, from_network: 0, fetched: 0, stale: 0, failed: 0};
      return el('tr', {dataset: {upstream: upstream.name}},
        el('th', {scope: 'row'}, upstream.name),
        el('td', {class: 'wrap'}, safeLink(upstream.url), el('span', {class: 'muted'}, ` (${age})`)),
        el('td', null, String(pages.from_memory)),
        el('td', null, String(pages.fetched)),
        el('td', null, String(pages.stale)),
        el('td', null, String(pages.failed)),
        el('td', null, hitRatio(pages)));
    }));
}

function routeList(routes) {
  if (routes.length === 0) return el('p', {class: 'muted'}, 'No routes: every name not owned here comes from the first upstream.');
  return el('ul', {id: 'route-list'}, routes.map((route) => el('li', null, el('code', null, route))));
}

function reservedTable(reserved) {
  if (reserved.length === 0) return el('p', {class: 'muted'}, 'No name is reserved (wheelhouse reserve).');
  return table('reserved-table', ['Name or pattern', 'Why', 'By', 'Since'],
    reserved.map((entry) => el('tr', null,
      el('th', {scope: 'row'}, el('code', null, entry.pattern)),
      el('td', {class: 'wrap'}, entry.reason ?? ''),
      el('td', null, entry.created_by),
      el('td', null, timeElement(new Date(entry.created_ms).toISOString())))));
}

const counted = (count, noun) => `${count} ${noun}${count === 1 ? '' : 's'}`;

function keptTable(projects, totals) {
  if (projects.length === 0) return el('p', {class: 'muted'}, 'No upstream file is kept here yet.');
  return [
    el('p', {class: 'muted', id: 'kept-totals'},
      `${counted(totals.files, 'file')}, ${formatBytes(totals.bytes)}, over ${counted(projects.length, 'project')}`),
    table('kept-table', ['Project', 'From', 'Files', 'Size'],
      projects.map((entry) => el('tr', {dataset: {project: entry.project}},
        el('th', {scope: 'row'}, entry.project),
        el('td', null, entry.upstream),
        el('td', null, String(entry.files)),
        el('td', null, formatBytes(entry.bytes))))),
  ];
}
