// Tokens (create, with the secret shown once; revoke) and the audit log, paged and filtered by
// the server (action, actor, text or a short hash). Both need an admin token for every
// project: the API refuses others, and this page shows its message.

import {api, enc, token} from './api.mjs';
import {add, clear, copyButton, el, timeElement} from './dom.mjs';
import {act, refresh} from './notice.mjs';

export async function showAdmin(target, stillCurrent) {
  add(target, el('h1', null, 'Tokens & audit'));
  if (!token()) {
    add(target, el('p', {class: 'empty'}, 'Enter an admin token above to manage tokens and read the audit log.'));
  }
  const tokens = el('section', {id: 'tokens'}, el('h2', null, 'Tokens'));
  const audit = el('section', {id: 'audit'}, el('h2', null, 'Audit log'));
  add(target, tokens, audit);

  const [tokenList] = await Promise.allSettled([api('tokens'), auditLog(audit, stillCurrent)]);
  if (!stillCurrent()) return;
  if (tokenList.status === 'fulfilled') add(tokens, tokenTable(tokenList.value.tokens), createForm());
  else add(tokens, el('p', {class: 'error-text'}, tokenList.reason.message));
}

const AUDIT_PER_PAGE = 50;

// The audit log a page at a time, newest first, with its filters; the address is not touched
// (the log is a tool, not a place to link to).
async function auditLog(section, stillCurrent) {
  const state = {action: '', actor: '', q: '', page: 1};
  const action = el('select', {id: 'audit-action', 'aria-label': 'Action'}, el('option', {value: ''}, 'every action'));
  const actor = el('input', {type: 'search', id: 'audit-actor', placeholder: 'who (exactly)', autocomplete: 'off',
    spellcheck: false, 'aria-label': 'Actor'});
  const search = el('input', {type: 'search', id: 'audit-search', placeholder: 'file, project, text or short hash',
    autocomplete: 'off', spellcheck: false, 'aria-label': 'Search the audit log'});
  const count = el('p', {class: 'muted', id: 'audit-count'});
  const body = el('div');
  const pager = el('nav', {class: 'pager', id: 'audit-pager', 'aria-label': 'Audit pages'});
  add(section, el('form', {class: 'filters', id: 'audit-filters', on: {submit: (event) => event.preventDefault()}},
    action, actor, search), count, body, pager);

  let controller = null;
  async function load() {
    if (!stillCurrent()) return;
    controller?.abort();
    controller = new AbortController();
    const query = new URLSearchParams({page: String(state.page), per_page: String(AUDIT_PER_PAGE)});
    for (const key of ['action', 'actor', 'q']) if (state[key]) query.set(key, state[key]);
    let answer;
    try {
      answer = await api(`audit?${query}`, {signal: controller.signal});
    } catch (failure) {
      if (failure.name === 'AbortError' || !stillCurrent()) return;
      add(clear(body), el('p', {class: 'error-text'}, failure.message));
      section.querySelector('#audit-filters').hidden = true;
      return;
    }
    if (!stillCurrent()) return;
    for (const name of answer.actions) {
      if (![...action.options].some((option) => option.value === name)) action.append(el('option', {value: name}, name));
    }
    count.textContent = `${answer.total} ${answer.total === 1 ? 'entry' : 'entries'}`;
    add(clear(body), auditTable(answer.entries));
    clear(pager);
    if (answer.pages > 1) {
      const go = (page) => () => { state.page = page; load(); };
      add(pager,
        el('button', {type: 'button', disabled: answer.page <= 1, on: {click: go(answer.page - 1)}}, '← Newer'),
        el('span', null, ` page ${answer.page} of ${answer.pages} `),
        el('button', {type: 'button', disabled: answer.page >= answer.pages, on: {click: go(answer.page + 1)}}, 'Older →'));
    }
  }
  const refilter = (key, input) => {
    let typing = null;
    input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => {
      clearTimeout(typing);
      typing = setTimeout(() => {
        state[key] = input.value.trim();
        state.page = 1;
        load();
      }, input.tagName === 'SELECT' ? 0 : 150);
    });
  };
  refilter('action', action);
  refilter('actor', actor);
  refilter('q', search);
  await load();
}

// A sha256 as its first twelve characters (enough to tell files apart, and what the search
// takes); the whole of it in the title and on copy.
const SHA256 = /^[0-9a-f]{64}$/;
function detailCell(detail) {
  if (detail && SHA256.test(detail)) {
    return [el('code', {class: 'hash short', title: detail}, detail.slice(0, 12)), copyButton(() => detail)];
  }
  return detail ?? '';
}

function tokenTable(tokens) {
  if (tokens.length === 0) return el('p', {class: 'muted'}, 'No tokens yet.');
  return el('div', {class: 'table-wrap'}, el('table', {class: 'tokens'},
    el('thead', null, el('tr', null, ['Name', 'Scope', 'Projects', 'Created', 'Expires', 'Last used', 'State', '']
      .map((heading) => el('th', {scope: 'col'}, heading)))),
    el('tbody', null, tokens.map((entry) => el('tr', {dataset: {token: entry.name}},
      el('th', {scope: 'row'}, entry.name),
      el('td', null, entry.scope),
      el('td', null, entry.projects.join(', ')),
      el('td', null, timeElement(entry.created)),
      el('td', null, timeElement(entry.expires)),
      el('td', null, timeElement(entry.last_used)),
      el('td', null, entry.revoked ? ['revoked ', timeElement(entry.revoked)] : entry.usable ? 'usable' : 'expired'),
      el('td', null, entry.revoked ? '' : el('button', {type: 'button', class: 'danger-outline', on: {click: async () => {
        const done = await act(`token ${entry.name} is revoked`, () => api(`tokens/${enc(entry.name)}`, {method: 'DELETE'}));
        if (done) refresh();
      }}}, 'Revoke')))))));
}

function createForm() {
  const name = el('input', {type: 'text', id: 'new-token-name', placeholder: 'name, e.g. ci-flash-attn', required: true,
    maxLength: 100, pattern: '[A-Za-z0-9._\\-]+'});
  const scope = el('select', {id: 'new-token-scope', 'aria-label': 'Scope'},
    ['upload', 'read', 'admin'].map((value) => el('option', {value}, value)));
  const projects = el('input', {type: 'text', id: 'new-token-projects', placeholder: 'projects (comma separated; empty: all)'});
  const days = el('input', {type: 'number', id: 'new-token-days', min: 1, max: 3650, placeholder: 'expires in days'});
  const secret = el('div', {id: 'new-token-secret', class: 'secret', hidden: true});
  const form = el('form', {class: 'curation', id: 'token-create'},
    name, scope, projects, days, el('button', {type: 'submit'}, 'Create token'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = {
      name: name.value.trim(),
      scope: scope.value,
      projects: projects.value.split(',').map((item) => item.trim()).filter(Boolean),
      expires_in_days: days.value ? Number(days.value) : null,
    };
    const created = await act(`token ${body.name} created`, () => api('tokens', {method: 'POST', body}));
    if (!created) return;
    // The secret exists only in this answer: show it once, with a copy button, and never again.
    const code = el('code', null, created.secret);
    add(clear(secret), el('p', null, el('strong', null, `Secret of ${created.token.name}`),
      ' — shown once; copy it now:'), el('div', {class: 'command'}, code, copyButton(() => created.secret)));
    secret.hidden = false;
    form.reset();
  });
  return el('div', null, el('h3', null, 'New token'), form, secret);
}

function auditTable(entries) {
  if (entries.length === 0) return el('p', {class: 'muted'}, 'Nothing recorded yet.');
  const link = (entry) => {
    if (entry.target.endsWith('.whl') && entry.action !== 'delete_file') return el('a', {href: `#/file/${enc(entry.target)}`}, entry.target);
    if (entry.action === 'set_status') return el('a', {href: `#/project/${enc(entry.target)}`}, entry.target);
    return entry.target;
  };
  return el('div', {class: 'table-wrap'}, el('table', {class: 'audit'},
    el('thead', null, el('tr', null, ['When', 'Who', 'What', 'On', 'Detail'].map((heading) => el('th', {scope: 'col'}, heading)))),
    el('tbody', null, entries.map((entry) => el('tr', null,
      el('td', null, timeElement(entry.time)),
      el('td', null, entry.actor),
      el('td', null, entry.action),
      el('td', {class: 'wrap'}, link(entry)),
      el('td', {class: 'wrap'}, detailCell(entry.detail)))))));
}
