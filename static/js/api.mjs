// The JSON API under /api/v1/, with the token the person entered (kept for this tab only) on
// every request: reads need one on a private index, changes always need an admin's. Every
// refusal comes back as an ApiError carrying the server's own message.

const TOKEN_KEY = 'wheelhouse.admin-token';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export async function api(path, {method = 'GET', body, signal} = {}) {
  const headers = {Accept: 'application/json'};
  const secret = token();
  if (secret) headers.Authorization = `Bearer ${secret}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(`/api/v1/${path}`, {
      method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (failure) {
    if (failure.name === 'AbortError') throw failure;
    throw new ApiError(0, `the server did not answer (${failure.message}); is it running?`);
  }
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const message = payload?.error ?? `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message);
  }
  return payload;
}

export const enc = encodeURIComponent;
