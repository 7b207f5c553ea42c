/**
 * The page's fragment (`#token=T&session=ID`) and the token's home in sessionStorage.
 * The token is taken out of the address bar at once; only `#session=ID` stays, so the
 * URL can be shared or bookmarked without the secret. Fragments are never sent to the
 * server; the token travels only in the `hello` frame.
 */
const TOKEN_KEY = 'agentd.token';

export interface Fragment {
  token: string | null;
  session: string | null;
}

export function parseFragment(hash: string): Fragment {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  return { token: params.get('token') || null, session: params.get('session') || null };
}

/** Read the fragment once at start-up: store a token, strip it from the address bar. */
export function takeFragment(): Fragment {
  const frag = parseFragment(location.hash);
  if (frag.token) {
    saveToken(frag.token);
    showSession(frag.session);
  }
  return frag;
}

export function loadToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function saveToken(token: string): void {
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // storage disabled: the token lives only as long as this page
  }
}

/** Put `#session=ID` (or nothing) in the address bar without a navigation. */
export function showSession(id: string | null): void {
  const url = `${location.pathname}${location.search}${id ? `#session=${encodeURIComponent(id)}` : ''}`;
  history.replaceState(null, '', url);
}
