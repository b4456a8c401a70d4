// The HTTP and WebSocket API of the server (docs/server.md), for the pages.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function request(method, path, { token = null, body = undefined } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, "the server cannot be reached");
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new ApiError(response.status, data.error || `${response.status} ${response.statusText}`);
    error.view = data.view || null; // a stale action's 409 carries the current view
    throw error;
  }
  return data;
}

// A fresh id for an action (the server answers a repeat of it with the first answer).
export function actionId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// POST an action with the version of the view it was made on and an id of its own;
// a request that got no answer (the connection dropped) is sent again, the same id
// with it, so it is never played twice.
export async function postAction(gameId, token, move, version) {
  const body = { move, expected_version: version, action_id: actionId() };
  const path = `/api/games/${encodeURIComponent(gameId)}/actions`;
  for (let attempt = 1; ; attempt++) {
    try {
      return await request("POST", path, { token, body });
    } catch (e) {
      if ((e.status !== 0 && e.status !== 503) || attempt >= 4) throw e;
      await new Promise((resolve) => setTimeout(resolve, 300 * 2 ** attempt));
    }
  }
}

// Views of a game pushed over a WebSocket; reconnects (with back-off) until closed.
// onView(view) for each view; onStatus("open" | "closed" | "refused", reason).
export function watch(gameId, token, onView, onStatus) {
  let socket = null, stopped = false, delay = 500;
  const url = new URL(`/api/games/${encodeURIComponent(gameId)}/ws`, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  // the token travels as a subprotocol (a header no access log writes), not in the URL
  const protocols = token ? ["qwirkle", `qwirkle.token.${token}`] : ["qwirkle"];
  function connect() {
    socket = new WebSocket(url, protocols);
    socket.onopen = () => { delay = 500; onStatus("open"); };
    socket.onmessage = (e) => onView(JSON.parse(e.data));
    socket.onclose = (e) => {
      if (stopped) return;
      if (e.code >= 4000 && e.code < 5000) { // refused by the server: do not retry
        stopped = true;
        onStatus("refused", e.reason);
        return;
      }
      onStatus("closed");
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 5000);
    };
  }
  connect();
  return { close() { stopped = true; socket?.close(); } };
}
