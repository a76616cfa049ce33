// The project list: search as you type (the server folds names as PEP 503 does, so
// "Flash_Attn" finds flash-attn), sorted and paginated by the server.

import {api} from './api.mjs';
import {add, clear, el, formatBytes, timeElement} from './dom.mjs';

const SORTS = [['name', 'Name'], ['recent', 'Last upload'], ['files', 'Files'], ['size', 'Size']];
const PER_PAGE = 50;

export async function showProjects(target, params, stillCurrent) {
  const state = {
    q: params.get('q') ?? '',
    sort: params.get('sort') ?? 'name',
    page: Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1),
  };
  const search = el('input', {
    type: 'search', id: 'project-search', placeholder: 'Search projects', value: state.q,
    autocomplete: 'off', spellcheck: false, 'aria-label': 'Search projects by name',
  });
  const sort = el('select', {id: 'project-sort', 'aria-label': 'Sort by'},
    SORTS.map(([value, label]) => el('option', {value, selected: value === state.sort}, label)));
  const summary = el('p', {class: 'muted', id: 'project-count'});
  const list = el('div', {class: 'table-wrap'});
  const pager = el('nav', {class: 'pager', 'aria-label': 'Pages'});
  add(target, el('h1', null, 'Projects'), el('div', {class: 'toolbar'}, search, sort), summary, list, pager);

  let controller = null;
  async function load() {
    if (!stillCurrent()) return;  // a late keystroke after leaving this page
    controller?.abort();
    controller = new AbortController();
    const query = new URLSearchParams({q: state.q, sort: state.sort, page: String(state.page), per_page: String(PER_PAGE)});
    // Keep the address in step without a new history entry per keystroke.
    history.replaceState(null, '', `#/?${new URLSearchParams({q: state.q, sort: state.sort, page: String(state.page)})}`);
    const answer = await api(`projects?${query}`, {signal: controller.signal});
    if (!stillCurrent()) return;
    renderList(answer);
  }

  function renderList(answer) {
    summary.textContent = answer.total === 1 ? '1 project' : `${answer.total} projects`;
    if (answer.query) summary.textContent += ` matching “${answer.query}”`;
    if (answer.projects.length === 0) {
      add(clear(list), el('p', {class: 'empty'}, answer.total === 0 && !answer.query
        ? 'The index is empty. Upload a wheel with twine or wheelhouse ingest.'
        : 'No project matches.'));
    } else {
      add(clear(list), el('table', {class: 'projects'},
        el('thead', null, el('tr', null, ['Project', 'Latest', 'Files', 'Size', 'Last upload', 'Status']
          .map((heading) => el('th', {scope: 'col'}, heading)))),
        el('tbody', null, answer.projects.map((project) => el('tr', {dataset: {project: project.name}},
          el('th', {scope: 'row'}, el('a', {href: `#/project/${encodeURIComponent(project.name)}`}, project.display_name),
            project.display_name !== project.name ? el('span', {class: 'muted small'}, ` ${project.name}`) : null),
          el('td', null, project.latest_version || '—'),
          el('td', {class: 'number'}, String(project.file_count)),
          el('td', {class: 'number'}, formatBytes(project.total_size)),
          el('td', null, timeElement(project.last_upload)),
          el('td', null, el('span', {class: `status status-${project.status}`}, project.status)),
        )))));
    }
    clear(pager);
    if (answer.pages > 1) {
      const go = (page) => () => { state.page = page; load().catch(report); };
      add(pager, 
        el('button', {type: 'button', disabled: answer.page <= 1, on: {click: go(answer.page - 1)}}, '← Previous'),
        el('span', null, ` page ${answer.page} of ${answer.pages} `),
        el('button', {type: 'button', disabled: answer.page >= answer.pages, on: {click: go(answer.page + 1)}}, 'Next →'));
    }
  }

  function report(failure) {
    if (failure.name === 'AbortError' || !stillCurrent()) return;
    add(clear(list), el('p', {class: 'error-text'}, failure.message));
  }

  let typing = null;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      state.q = search.value;
      state.page = 1;
      load().catch(report);
    }, 120);
  });
  sort.addEventListener('change', () => {
    state.sort = sort.value;
    state.page = 1;
    load().catch(report);
  });
  await load();
  search.focus();
}
