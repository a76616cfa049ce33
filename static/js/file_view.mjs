// One wheel: where its bytes are, its decoded variant, its METADATA as text, its downloads per
// day, what was done to it, and yank / un-yank / delete for an admin.

import {api, enc} from './api.mjs';
import {downloadChart, lastDays} from './chart.mjs';
import {add, el, formatBytes, safeLink, timeElement} from './dom.mjs';
import {act, navigate, refresh} from './notice.mjs';

export async function showFile(target, filename, stillCurrent) {
  const file = await api(`files/${enc(filename)}`);
  if (!stillCurrent()) return;
  const variantEntries = Object.entries(file.variant);
  const where = file.location;

  add(target, 
    el('p', {class: 'crumbs'}, el('a', {href: '#/'}, 'Projects'), ' / ',
      el('a', {href: `#/project/${enc(file.project)}`}, file.display_name || file.project), ' / ', file.normalized_version),
    el('h1', {class: 'filename', id: 'file-name'}, file.filename),
    file.yanked === false ? null
      : el('p', {class: 'warning', id: 'yanked-note'}, `Yanked${file.yanked ? `: ${file.yanked}` : ' (no reason given)'}`),
    el('p', {class: 'summary', id: 'file-summary'}, file.summary ?? 'No summary in METADATA.'),
    el('dl', {class: 'facts'},
      el('dt', null, 'Size'), el('dd', null, `${formatBytes(file.size)} (${file.size} bytes)`),
      el('dt', null, 'SHA-256'), el('dd', null, el('code', {class: 'hash', id: 'file-sha256'}, file.sha256)),
      el('dt', null, 'Uploaded'), el('dd', null, timeElement(file.upload_time), ' by ',
        el('span', {id: 'uploaded-by'}, file.uploaded_by ?? 'unknown')),
      el('dt', null, 'Bytes'), el('dd', {id: 'file-location'}, where.mode, ': ',
        safeLink(where.url),
        where.remote_url ? [' from ', safeLink(where.remote_url, {rel: 'noreferrer'})] : null),
      el('dt', null, 'Tags'), el('dd', null, `${file.python_tag}-${file.abi_tag}-${file.platform_tag}`,
        file.build_tag ? ` (build ${file.build_tag})` : ''),
      el('dt', null, 'Variant'), el('dd', {id: 'file-variant'}, variantEntries.length === 0 ? 'none'
        : el('ul', {class: 'inline-list'}, variantEntries.map(([key, value]) =>
          el('li', null, el('span', {class: 'muted'}, `${key} `), Array.isArray(value) ? value.join(', ') : String(value))))),
      file.pep825 === null ? null : [
        el('dt', null, 'PEP 825 variant'), el('dd', {id: 'file-pep825'}, el('code', null, file.pep825.label), ': ',
          file.pep825.properties.length === 0 ? 'no properties (the null variant)'
            : el('ul', {class: 'inline-list'}, file.pep825.properties.map((property) => el('li', null, property))))],
      el('dt', null, 'Requires-Python'), el('dd', null, file.requires_python ?? 'any'),
      el('dt', null, 'Project status'), el('dd', null, file.project_status)),
    curation(file),
    el('section', null,
      el('h2', null, 'Downloads ', el('span', {class: 'muted small', id: 'download-total'}, `${file.downloads.total} in all`)),
      downloadChart(lastDays(file.downloads.days))),
    el('section', null,
      el('h2', null, 'METADATA'),
      file.metadata.text === null ? el('p', {class: 'muted'}, 'Not kept for this file.')
        : el('pre', {class: 'metadata', id: 'file-metadata'}, file.metadata.text)),
    el('section', null,
      el('h2', null, 'History'),
      file.history.length === 0 ? el('p', {class: 'muted'}, 'No change recorded.')
        : el('ul', {class: 'history'}, file.history.map((entry) => el('li', null, timeElement(entry.time), ' ',
          el('strong', null, entry.actor), ` ${entry.action}`, entry.detail ? ` — ${entry.detail}` : ''))))
  );
}

function curation(file) {
  const reason = el('input', {type: 'text', id: 'yank-reason', placeholder: 'reason', maxLength: 1000});
  const yanked = file.yanked !== false;
  const toggle = el('button', {type: 'submit', id: yanked ? 'unyank-button' : 'yank-button'}, yanked ? 'Un-yank' : 'Yank');
  const yankForm = el('form', {class: 'curation'}, reason, toggle);
  yankForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const action = yanked ? 'unyank' : 'yank';
    const done = await act(`${file.filename} ${yanked ? 'is offered again' : 'is yanked'}`,
      () => api(`files/${enc(file.filename)}/${action}`, {method: 'POST', body: {reason: reason.value || null}}));
    if (done) refresh();
  });

  // Deleting asks twice, inside the page (no dialog box).
  const confirm = el('button', {type: 'button', class: 'danger', id: 'delete-confirm', hidden: true}, 'Delete for good');
  const remove = el('button', {type: 'button', class: 'danger-outline', id: 'delete-button'}, 'Delete…');
  remove.addEventListener('click', () => {
    confirm.hidden = false;
    remove.hidden = true;
  });
  confirm.addEventListener('click', async () => {
    const done = await act(`${file.filename} is deleted`, () => api(`files/${enc(file.filename)}`, {method: 'DELETE'}));
    if (done) navigate(`#/project/${enc(file.project)}`);
    else {
      confirm.hidden = true;
      remove.hidden = false;
    }
  });
  return el('details', {class: 'admin-box', open: true}, el('summary', null, 'Curate (admin token)'),
    yankForm, el('div', {class: 'curation'}, remove, confirm));
}
