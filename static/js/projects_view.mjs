// The project list: search as you type (the server folds names as PEP 503 does, so
// "Flash_Attn" finds flash-attn), filtered by the builds a project has or lacks ("which projects
// have a cu130 / sm120 / torch2.10 build, and which lack one?"), sorted and paginated by the
// server. The filters offer the words the visible builds name (GET /api/v1/variants).

import {api} from './api.mjs';
import {add, clear, el, formatBytes, timeElement} from './dom.mjs';

const SORTS = [['name', 'Name'], ['recent', 'Last upload'], ['files', 'Files'], ['size', 'Size']];
const PER_PAGE = 50;
// Each filter: its query parameter, its label, and what "any" says.
const FILTERS = [['cuda', 'CUDA'], ['torch', 'torch'], ['sm', 'GPU (SM)'], ['rocm', 'ROCm'], ['python', 'Python'],
  ['kind', 'Files']];

// "with a cu130 · torch2.10 build for cp312", "without an sdist" from the filters the server
// read back.
function filterPhrase(filters) {
  const words = ['cuda', 'rocm', 'torch', 'sm'].map((axis) => filters[axis]).filter(Boolean);
  if (words.length === 0 && !filters.python && !filters.kind) return '';
  const noun = filters.kind ?? 'build';
  const build = words.length ? `a ${words.join(' · ')} ${noun}` : `${noun === 'sdist' ? 'an' : 'a'} ${noun}`;
  const python = filters.python ? ` for ${filters.python}` : '';
  return ` ${filters.lacks ? 'without' : 'with'} ${build}${python}`;
}

export async function showProjects(target, params, stillCurrent) {
  const state = {
    q: params.get('q') ?? '',
    sort: params.get('sort') ?? 'name',
    page: Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1),
    lacks: params.get('lacks') === '1',
  };
  for (const [axis] of FILTERS) state[axis] = params.get(axis) ?? '';
  const search = el('input', {
    type: 'search', id: 'project-search', placeholder: 'Search projects', value: state.q,
    autocomplete: 'off', spellcheck: false, 'aria-label': 'Search projects by name',
  });
  const sort = el('select', {id: 'project-sort', 'aria-label': 'Sort by'},
    SORTS.map(([value, label]) => el('option', {value, selected: value === state.sort}, label)));
  const summary = el('p', {class: 'muted', id: 'project-count'});
  const list = el('div', {class: 'table-wrap'});
  const pager = el('nav', {class: 'pager', 'aria-label': 'Pages'});
  const filters = filterBar(state, () => { state.page = 1; load().catch(report); });
  add(target, el('h1', null, 'Projects'), el('div', {class: 'toolbar'}, search, sort), filters.form, summary, list, pager);

  let controller = null;
  async function load() {
    if (!stillCurrent()) return;  // a late keystroke after leaving this page
    controller?.abort();
    controller = new AbortController();
    const shown = {q: state.q, sort: state.sort, page: String(state.page)};
    for (const [axis] of FILTERS) if (state[axis]) shown[axis] = state[axis];
    if (state.lacks) shown.lacks = '1';
    const query = new URLSearchParams({...shown, per_page: String(PER_PAGE)});
    // Keep the address in step without a new history entry per keystroke.
    history.replaceState(null, '', `#/?${new URLSearchParams(shown)}`);
    const answer = await api(`projects?${query}`, {signal: controller.signal});
    if (!stillCurrent()) return;
    renderList(answer);
  }

  function renderList(answer) {
    summary.textContent = answer.total === 1 ? '1 project' : `${answer.total} projects`;
    if (answer.query) summary.textContent += ` matching “${answer.query}”`;
    summary.textContent += filterPhrase(answer.filters ?? {});
    const filtered = filterPhrase(answer.filters ?? {}) !== '';
    if (answer.projects.length === 0) {
      add(clear(list), el('p', {class: 'empty'}, answer.total === 0 && !answer.query && !filtered
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
  await Promise.all([load(), filters.fill()]);
  search.focus();
}

// A select per axis (any, or a word the builds name) and "with / without such a build". The
// words arrive after the list; a word in the address that no build names stays selectable.
function filterBar(state, changed) {
  const selects = FILTERS.map(([axis, label]) => {
    const select = el('select', {id: `filter-${axis}`, 'aria-label': `${label} filter`, dataset: {axis}},
      el('option', {value: ''}, `${label}: any`),
      state[axis] ? el('option', {value: state[axis], selected: true}, state[axis]) : null);
    select.addEventListener('change', () => {
      state[axis] = select.value;
      changed();
    });
    return select;
  });
  const lacks = el('select', {id: 'filter-lacks', 'aria-label': 'Has or lacks such a build'},
    el('option', {value: '', selected: !state.lacks}, 'has such a build'),
    el('option', {value: '1', selected: state.lacks}, 'lacks such a build'));
  lacks.addEventListener('change', () => {
    state.lacks = lacks.value === '1';
    if (FILTERS.some(([axis]) => state[axis])) changed();  // lacking nothing filters nothing
  });
  const form = el('form', {class: 'filters', id: 'project-filters', on: {submit: (event) => event.preventDefault()}},
    el('span', {class: 'muted'}, 'Builds:'), selects, lacks);

  async function fill() {
    let words;
    try {
      words = await api('variants');
    } catch {
      return;  // the list says why (a private index without a token)
    }
    for (const select of selects) {
      const axis = select.dataset.axis;
      const offered = words[axis] ?? [];
      for (const word of offered) {
        if (word === state[axis]) continue;
        select.append(el('option', {value: word}, word));
      }
      select.disabled = offered.length === 0 && !state[axis];
    }
  }
  return {form, fill};
}
