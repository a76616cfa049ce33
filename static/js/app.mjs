// The admin catalog: a hash router over five views. The server serves this one page at `/`;
// everything else comes from /api/v1/ as JSON.

import {setToken, token} from './api.mjs';
import {showAdmin} from './admin_view.mjs';
import {add, clear, el} from './dom.mjs';
import {showFile} from './file_view.mjs';
import {hideNotice, hideNoticeOnNavigation, showNotice} from './notice.mjs';
import {showProject} from './project_view.mjs';
import {showProjects} from './projects_view.mjs';
import {showUpstream} from './upstream_view.mjs';

const view = document.getElementById('view');

// "#/project/flash-attn" -> ['project', 'flash-attn']; "#/?q=x" -> [''] with params {q: 'x'}.
function parseHash() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = hash.split('?');
  const parts = path.split('/').map(decodeURIComponent);
  return {parts, params: new URLSearchParams(query)};
}

// A private index answers reads only with a token: 401 asks for one, 403 says this one cannot.
const HEADINGS = {401: 'A token is needed', 403: 'Not for this token', 404: 'Not found'};

let generation = 0;

async function render() {
  generation += 1;
  const mine = generation;
  const {parts, params} = parseHash();
  const stillCurrent = () => mine === generation;
  hideNoticeOnNavigation();
  const target = el('div', {class: 'page'});
  add(clear(view), target);
  try {
    if (parts[0] === 'project' && parts[1]) await showProject(target, parts[1], stillCurrent);
    else if (parts[0] === 'file' && parts[1]) await showFile(target, parts[1], stillCurrent);
    else if (parts[0] === 'admin') await showAdmin(target, stillCurrent);
    else if (parts[0] === 'upstream') await showUpstream(target, stillCurrent);
    else await showProjects(target, params, stillCurrent);
  } catch (failure) {
    if (!stillCurrent() || failure.name === 'AbortError') return;
    add(clear(target), 
      el('h1', null, HEADINGS[failure.status] ?? 'Something went wrong'),
      el('p', {class: 'error-text'}, failure.message),
      el('p', null, el('a', {href: '#/'}, 'Back to the projects')),
    );
  }
}

function renderTokenState() {
  const state = document.getElementById('token-state');
  const forget = document.getElementById('token-forget');
  const input = document.getElementById('token-input');
  const present = Boolean(token());
  state.textContent = present ? 'token in use for this tab' : 'read-only';
  forget.hidden = !present;
  input.value = '';
}

document.getElementById('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = document.getElementById('token-input').value.trim();
  if (!value) return;
  setToken(value);
  renderTokenState();
  showNotice('Token set; the page\'s requests now carry it.', 'info');
  render();
});
document.getElementById('token-forget').addEventListener('click', () => {
  setToken('');
  renderTokenState();
  render();
});
document.getElementById('notice-close').addEventListener('click', hideNotice);

window.addEventListener('hashchange', render);
window.addEventListener('wheelhouse:refresh', render);
renderTokenState();
render();
