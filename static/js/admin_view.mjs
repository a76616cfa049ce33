// Tokens (create, with the secret shown once; revoke) and the audit log. Both need an admin
// token for every project: the API refuses others, and this page shows its message.

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

  const [tokenList, log] = await Promise.allSettled([api('tokens'), api('audit?limit=200')]);
  if (!stillCurrent()) return;
  if (tokenList.status === 'fulfilled') add(tokens, tokenTable(tokenList.value.tokens), createForm());
  else add(tokens, el('p', {class: 'error-text'}, tokenList.reason.message));
  if (log.status === 'fulfilled') add(audit, auditTable(log.value.entries));
  else add(audit, el('p', {class: 'error-text'}, log.reason.message));
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
      el('td', {class: 'wrap'}, entry.detail ?? ''))))));
}
