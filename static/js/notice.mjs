// One line at the top of the page for what just happened: a done action or a refusal.

const box = () => document.getElementById('notice');

export function showNotice(message, kind = 'error') {
  const notice = box();
  document.getElementById('notice-text').textContent = message;
  notice.className = `notice notice-${kind}`;
  notice.hidden = false;
}

export function hideNotice() {
  box().hidden = true;
}

// A notice shown just before moving to another page stays for that page.
let keepForNextPage = false;

export function keepNoticeForNextPage() {
  keepForNextPage = true;
}

export function hideNoticeOnNavigation() {
  if (keepForNextPage) keepForNextPage = false;
  else hideNotice();
}

// Runs a curation request, telling the person what came of it. Returns the answer, or null.
export async function act(what, request) {
  try {
    const answer = await request();
    showNotice(what, 'info');
    return answer;
  } catch (failure) {
    const prefix = failure.status === 401 || failure.status === 403 ? 'Refused' : 'Failed';
    showNotice(`${prefix}: ${failure.message}`, 'error');
    return null;
  }
}

// Draws the current page again (after a change), keeping the notice that reported it.
export function refresh() {
  keepNoticeForNextPage();
  window.dispatchEvent(new Event('wheelhouse:refresh'));
}

// Moves to another page, keeping the notice.
export function navigate(hash) {
  keepNoticeForNextPage();
  location.hash = hash;
}
