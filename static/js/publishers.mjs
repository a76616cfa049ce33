// A project's trusted publishers: the CI workflows that may trade an identity token (OIDC) for a
// short-lived upload token to it, each optionally limited to builds by label. Listing and
// changing them needs an admin token for the project; the API refuses others, and this box
// shows its message.

import {api, enc, token} from './api.mjs';
import {add, clear, el, timeElement} from './dom.mjs';
import {act, refresh} from './notice.mjs';

// The project whose box was last opened: a change redraws the page, and the box stays open.
let openFor = null;

export function publishersBox(project) {
  const body = el('div', {id: 'publishers'});
  const box = el('details', {class: 'admin-box', id: 'publishers-box', open: openFor === project},
    el('summary', null, 'Trusted publishers (admin token)'), body);
  box.addEventListener('toggle', () => {
    openFor = box.open ? project : null;
    if (box.open && body.childElementCount === 0) load(body, project);
  });
  return box;
}

async function load(body, project) {
  if (!token()) {
    add(body, el('p', {class: 'muted'}, 'Enter an admin token above to see and change who may publish this project.'));
    return;
  }
  let answer;
  try {
    answer = await api(`projects/${enc(project)}/publishers`);
  } catch (failure) {
    add(clear(body), el('p', {class: 'error-text'}, failure.message));
    return;
  }
  add(clear(body),
    el('p', {class: 'muted'}, 'CI requests its identity token for the audience ', el('code', null, answer.audience),
      ` and trades it at /_/oidc/mint-token for an upload token that lives ${Math.round(answer.token_lifetime / 60)} minutes.`),
    publisherTable(project, answer.publishers), addForm(project));
}

function publisherTable(project, publishers) {
  if (publishers.length === 0) return el('p', {class: 'muted', id: 'publishers-empty'}, 'No trusted publisher yet.');
  return el('div', {class: 'table-wrap'}, el('table', {class: 'publishers'},
    el('thead', null, el('tr', null, ['Id', 'Kind', 'Repository', 'Owner id', 'Workflow', 'Environment', 'Builds',
      'Added', ''].map((heading) => el('th', {scope: 'col'}, heading)))),
    el('tbody', null, publishers.map((publisher) => el('tr', {dataset: {publisher: String(publisher.id)}},
      el('td', null, String(publisher.id)),
      el('td', null, publisher.kind, publisher.issuer.includes('://token.actions.githubusercontent.com') ||
        publisher.issuer === 'https://gitlab.com' ? null : el('div', {class: 'muted small'}, publisher.issuer)),
      el('td', null, publisher.repository),
      el('td', null, el('code', null, publisher.owner_id)),
      el('td', {class: 'wrap'}, publisher.workflow),
      el('td', null, publisher.environment || 'any'),
      el('td', null, publisher.label_pattern ? el('code', null, publisher.label_pattern) : 'any'),
      el('td', null, timeElement(publisher.created), el('div', {class: 'muted small'}, publisher.created_by)),
      el('td', null, el('button', {type: 'button', class: 'danger-outline', on: {click: async () => {
        const done = await act(`publisher ${publisher.id} removed; the tokens it minted are revoked`,
          () => api(`projects/${enc(project)}/publishers/${publisher.id}`, {method: 'DELETE'}));
        if (done) refresh();
      }}}, 'Remove')))))));
}

function addForm(project) {
  const input = (id, placeholder, extra = {}) => el('input', {type: 'text', id, placeholder, ...extra});
  const kind = el('select', {id: 'new-publisher-kind', 'aria-label': 'Kind'},
    ['github', 'gitlab'].map((value) => el('option', {value}, value)));
  const repository = input('new-publisher-repository', 'OWNER/REPO', {required: true});
  const ownerId = input('new-publisher-owner-id', "owner's numeric id", {required: true, pattern: '[0-9]+'});
  const workflow = input('new-publisher-workflow', 'release.yml', {required: true});
  const environment = input('new-publisher-environment', 'environment (optional)');
  const labels = input('new-publisher-labels', "builds, e.g. cu130* (optional)");
  const issuer = input('new-publisher-issuer', 'issuer URL (default: GitHub.com / GitLab.com)');
  const form = el('form', {class: 'curation', id: 'publisher-add'},
    kind, repository, ownerId, workflow, environment, labels, issuer, el('button', {type: 'submit'}, 'Add publisher'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = {kind: kind.value, repository: repository.value.trim(), owner_id: ownerId.value.trim(),
      workflow: workflow.value.trim(), environment: environment.value.trim(), label_pattern: labels.value.trim(),
      issuer: issuer.value.trim()};
    const done = await act(`${body.repository} may now publish ${project}`,
      () => api(`projects/${enc(project)}/publishers`, {method: 'POST', body}));
    if (done) refresh();
  });
  return el('div', null, el('h3', null, 'New trusted publisher'), form);
}
