import { computed, effect, signal } from '@preact/signals';
import type { TokenResponse } from '@svc/protocol';
import { ApiError, messageOf } from '../api/errors.ts';
import { TOKENS_STORAGE_KEY as STORAGE_KEY, type Tokens, tokensOf } from './stored-tokens.ts';
import { type Identity, identityOf } from './token.ts';

/**
 * The signed-in state. Tokens live in memory and in sessionStorage (this tab, gone with it),
 * never in a cookie: uploaded reports are shown in sandboxed frames with an opaque origin,
 * which can read neither. Tabs of the console share one sign-in over a BroadcastChannel
 * (see below), which only documents of the console's own origin can join.
 */

function load(): Tokens | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (raw === null) return null;
    const t = JSON.parse(raw) as Tokens;
    return t.expiresAt > Date.now() ? t : null;
  } catch {
    return null;
  }
}

function store(t: Tokens | null): void {
  try {
    if (t === null) sessionStorage.removeItem(STORAGE_KEY);
    else sessionStorage.setItem(STORAGE_KEY, JSON.stringify(t));
  } catch {
    // Storage may be disabled; the tokens stay in memory for this page.
  }
}

const tokens = signal<Tokens | null>(load());

/**
 * One sign-in for every tab of the console's origin. A new tab (a Ctrl+click opens one with
 * empty sessionStorage) asks on the channel, and the tab that rotates the refresh token
 * answers with the tokens. Refresh tokens are single-use (a second use revokes the whole
 * family), so exactly one tab refreshes: the holder of a Web Lock held for the tab's life;
 * when it closes, the lock passes to another tab. The others ask it on the channel and
 * take the new tokens it sends to all. A sign-in, a refresh and a sign-out in any tab reach
 * every tab. A BroadcastChannel joins documents of one origin only: the report frames
 * (sandboxed, an opaque origin) and any other site cannot hear it. Without Web Locks (a
 * portal on plain http under a name other than localhost) tabs stay signed in one by one.
 */
type Message =
  | { type: 'ask' }
  | { type: 'tokens'; tokens: Tokens }
  | { type: 'refresh'; refreshToken: string }
  | { type: 'signed-out'; reason: string | null };

const CHANNEL = 'svc.console.session';
const REFRESHER_LOCK = 'svc.console.refresher';
/** How long a new tab waits for an answer before it shows the sign-in form. */
const ASK_MS = 400;
/** How long a tab waits for the refreshing tab before it gives up on this refresh. */
const REFRESH_WAIT_MS = 15_000;

const channel: BroadcastChannel | null =
  typeof BroadcastChannel === 'function' && typeof navigator.locks?.request === 'function'
    ? new BroadcastChannel(CHANNEL)
    : null;
/** Whether this tab rotates the refresh token (it holds the lock). */
const refresher = signal(channel === null);
/** True while a new tab waits for another tab's tokens. */
export const askingOtherTabs = signal(false);

function broadcast(message: Message): void {
  channel?.postMessage(message);
}

/** How long a tab whose lock request is pending waits for it before it asks another tab. */
const LOCK_WAIT_MS = 1_000;
let grantRefresher: () => void = () => {};
const refresherGranted = new Promise<void>((resolve) => {
  grantRefresher = resolve;
});

/** Answers to a refresh this tab asked the refreshing tab for. */
const waitingForRefresh: ((ok: boolean) => void)[] = [];
const settleWaiting = (ok: boolean) => {
  for (const settle of waitingForRefresh.splice(0)) settle(ok);
};

/** Who is signed in, or null. */
export const identity = computed<Identity | null>(() => {
  const t = tokens.value;
  if (t === null) return null;
  try {
    return identityOf(t.accessToken);
  } catch {
    return null;
  }
});

/** Why the last session ended when the user did not sign out (shown on the sign-in page). */
export const endedBecause = signal<string | null>(null);

export function accessToken(): string | null {
  return tokens.peek()?.accessToken ?? null;
}

function set(t: Tokens | null): void {
  store(t);
  tokens.value = t;
}

/** New tokens in this tab, and in every other tab of the console. */
function share(t: Tokens): void {
  set(t);
  broadcast({ type: 'tokens', tokens: t });
}

async function tokenRequest(form: Record<string, string>): Promise<Tokens> {
  let res: Response;
  try {
    res = await fetch('/identity/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form),
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, messageOf(0, null), null);
  }
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, messageOf(res.status, body), body);
  return tokensOf(body as TokenResponse, Date.now());
}

/** Password grant; throws ApiError with the identity provider's message. */
export async function signIn(email: string, password: string): Promise<void> {
  const t = await tokenRequest({ grant_type: 'password', username: email, password });
  endedBecause.value = null;
  share(t);
}

/** Forget the tokens in this tab and the others (what a 401 or a refused refresh leads to). */
export function signOut(reason: string | null = null): void {
  endedBecause.value = reason;
  set(null);
  broadcast({ type: 'signed-out', reason: reason ?? 'You signed out in another tab.' });
  settleWaiting(false);
}

/**
 * The user's sign-out: the identity provider first revokes the session (RFC 7009), so a copy
 * of the refresh token taken before stops working too, then this tab forgets it. A failed
 * revocation (portal unreachable) still signs this tab out.
 */
export async function signOutAndRevoke(): Promise<void> {
  const current = tokens.peek();
  // Forgotten here first: a call in flight that the revocation answers 401 then finds no session
  // to refresh (its refresh token is the one being revoked) and nothing to end again.
  signOut();
  if (current !== null) {
    try {
      await fetch('/identity/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ token: current.refreshToken, token_type_hint: 'refresh_token' }),
        credentials: 'omit',
      });
    } catch {
      // Nothing more to do: the session ends with its family's lifetime.
    }
  }
}

let refreshing: Promise<boolean> | null = null;

/** The refresh itself, in the tab that holds the refresher lock (or in a tab on its own). */
function refreshHere(current: Tokens): Promise<boolean> {
  return tokenRequest({ grant_type: 'refresh_token', refresh_token: current.refreshToken }).then(
    (t) => {
      share(t);
      return true;
    },
    (err: unknown) => {
      // A network failure keeps the session: the next request or timer tries again.
      if (err instanceof ApiError && err.status === 0) return false;
      signOut('Your session has ended. Sign in again.');
      return false;
    },
  );
}

/**
 * Ask the refreshing tab; true once it sent new tokens, false when it refused or did not answer.
 * The lock may pass to this tab meanwhile (the holder was a document being unloaded, as on a
 * reload): nobody else can then answer, so this tab refreshes itself, unless tokens came.
 */
function askRefresher(current: Tokens): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    const timer = setTimeout(() => settle(false), REFRESH_WAIT_MS);
    waitingForRefresh.push(settle);
    void refresherGranted.then(() => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const now = tokens.peek();
      if (now === null) resolve(false);
      else if (now.refreshToken !== current.refreshToken) resolve(true);
      else resolve(refreshHere(current));
    });
    broadcast({ type: 'refresh', refreshToken: current.refreshToken });
  });
}

/**
 * Whether this tab refreshes: it holds the lock, or nobody does and the lock is on its way to
 * it (a tab just loaded, or reloaded, has asked for it but may not have it yet).
 */
async function refreshesHere(): Promise<boolean> {
  if (channel === null || refresher.peek()) return true;
  const { held } = await navigator.locks.query();
  if (held?.some((lock) => lock.name === REFRESHER_LOCK)) return false;
  await Promise.race([refresherGranted, new Promise((r) => setTimeout(r, LOCK_WAIT_MS))]);
  return refresher.peek();
}

/**
 * Trade the refresh token for new tokens, once however many callers ask at the same time
 * (a refresh token is single-use: a second use would revoke the family). False, and
 * signed out, when the identity provider refuses it. A tab that does not hold the refresher
 * lock asks the one that does, and takes the tokens it sends.
 */
export function refreshTokens(): Promise<boolean> {
  const current = tokens.peek();
  if (current === null) return Promise.resolve(false);
  refreshing ??= refreshesHere()
    .then((here) => (here ? refreshHere(current) : askRefresher(current)))
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** An access token this close to its expiry is refreshed before it is handed to another tab. */
const HAND_OVER_MARGIN_MS = 30_000;

function onMessage(message: Message): void {
  const mine = tokens.peek();
  switch (message.type) {
    case 'ask':
      // Only the refreshing tab answers: its tokens are the newest by construction.
      if (refresher.peek() && mine !== null) broadcast({ type: 'tokens', tokens: mine });
      return;
    case 'tokens':
      endedBecause.value = null;
      set(message.tokens);
      askingOtherTabs.value = false;
      // Only new tokens answer a refresh: the same ones again (an answer to another tab's
      // question) would meet the same 401.
      if (message.tokens.accessToken !== mine?.accessToken) settleWaiting(true);
      return;
    case 'refresh':
      if (!refresher.peek() || mine === null) return;
      if (mine.refreshToken === message.refreshToken || mine.expiresAt - Date.now() < HAND_OVER_MARGIN_MS)
        void refreshTokens();
      else broadcast({ type: 'tokens', tokens: mine });
      return;
    case 'signed-out':
      if (mine === null) return;
      endedBecause.value = message.reason;
      set(null);
      settleWaiting(false);
      return;
  }
}

if (channel !== null) {
  channel.onmessage = (event: MessageEvent<Message>) => onMessage(event.data);
  // Held until the tab closes; then the next tab in line refreshes.
  void navigator.locks.request(REFRESHER_LOCK, () => {
    refresher.value = true;
    grantRefresher();
    return new Promise<never>(() => {});
  });
  if (tokens.peek() === null) {
    askingOtherTabs.value = true;
    broadcast({ type: 'ask' });
    setTimeout(() => {
      askingOtherTabs.value = false;
    }, ASK_MS);
  }
}

// Refresh ahead of expiry (the refreshing tab): a fifth of the lifetime before, at most a minute, at least 5 s from now.
effect(() => {
  const t = tokens.value;
  if (t === null || !refresher.value) return;
  const ahead = Math.min(60_000, (t.lifetime * 1000) / 5);
  const wait = Math.max(5_000, t.expiresAt - ahead - Date.now());
  const timer = setTimeout(() => void refreshTokens(), wait);
  return () => clearTimeout(timer);
});
