// The dashboard's only way to the service: the public JSON API, with the session cookies and
// the CSRF header the API asks of cookie-authenticated writes.

const BASE = "/api/v1";

export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.errors = body?.errors || null;
  }
}

function describe(status, body) {
  if (status === 0) return "The service cannot be reached. Check your connection and try again.";
  if (status === 429) return "Too many attempts. Wait a moment and try again.";
  if (status === 422 && body?.errors) return "Please correct the highlighted fields.";
  // A 502 is a tracker's (or provider's) refusal in its own words: trying again rarely helps.
  if (status === 502 && body?.detail) return body.detail;
  if (status >= 500) return `${body?.detail || "The service failed"}. Try again shortly.`;
  return body?.detail || `The request failed (HTTP ${status}).`;
}

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)svc_csrf_token=([^;]*)/);
  return match ? decodeURIComponent(match[1]) : "";
}

// The CSRF cookie lives exactly as long as the session (svc/auth/cookies.py): without it nobody
// is signed in, and the dashboard need not ask (and log two 401s in the console) to know it.
export function mayBeSignedIn() {
  return csrfToken() !== "";
}

let refreshing = null;
let onSignedOut = () => {};

export function whenSignedOut(callback) {
  onSignedOut = callback;
}

// One refresh at a time, shared by every request that found its access cookie expired.
function refreshSession() {
  refreshing ??= send("POST", "/auth/refresh").then(
    (response) => response.ok,
    () => false,
  ).finally(() => { refreshing = null; });
  return refreshing;
}

async function send(method, path, body) {
  const headers = { Accept: "application/json" };
  const options = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken();
  return fetch(BASE + path, options);
}

const NO_REFRESH = new Set(["/auth/login", "/auth/register", "/auth/refresh", "/auth/logout"]);

// Resolves with the parsed body (null for 204; the text itself with `asText`); rejects with an
// ApiError. An expired access cookie is refreshed silently and the request sent once more.
export async function request(method, path, body, asText = false) {
  let response;
  try {
    response = await send(method, path, body);
    if (response.status === 401 && !NO_REFRESH.has(path) && await refreshSession()) {
      response = await send(method, path, body);
    }
  } catch {
    throw new ApiError(0, null);
  }
  const text = await response.text();
  if (asText && response.ok) return text;
  const parsed = text ? safeJson(text) : null;
  if (!response.ok) {
    if (response.status === 401 && !NO_REFRESH.has(path)) onSignedOut();
    throw new ApiError(response.status, parsed);
  }
  return parsed;
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const api = {
  get: (path) => request("GET", path),
  text: (path) => request("GET", path, undefined, true),
  post: (path, body) => request("POST", path, body),
  patch: (path, body) => request("PATCH", path, body),
  put: (path, body) => request("PUT", path, body),
  delete: (path, body) => request("DELETE", path, body),
};

export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== "" && value !== null && value !== undefined) search.set(name, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export function screenshotSource(key) {
  return `${BASE}/screenshots/${encodeURIComponent(key)}`;
}
