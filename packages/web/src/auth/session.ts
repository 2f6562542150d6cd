import { computed, effect, signal } from '@preact/signals';
import type { TokenResponse } from '@svc/protocol';
import { ApiError, messageOf } from '../api/errors.ts';
import { type Identity, identityOf } from './token.ts';

/**
 * The signed-in state. Tokens live in memory and in sessionStorage (this tab only, gone with
 * it), never in a cookie: uploaded reports are shown in sandboxed frames with an opaque
 * origin, which can read neither.
 */
interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds at which the access token expires. */
  expiresAt: number;
  /** Seconds the access token was issued for, to schedule the refresh at a share of it. */
  lifetime: number;
}

const STORAGE_KEY = 'svc.console.tokens';

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
  const t = body as TokenResponse;
  return {
    accessToken: t.access_token,
    refreshToken: t.refresh_token,
    expiresAt: Date.now() + t.expires_in * 1000,
    lifetime: t.expires_in,
  };
}

/** Password grant; throws ApiError with the identity provider's message. */
export async function signIn(email: string, password: string): Promise<void> {
  const t = await tokenRequest({ grant_type: 'password', username: email, password });
  endedBecause.value = null;
  set(t);
}

/** Forget the tokens in this tab (what a 401 or a refused refresh leads to). */
export function signOut(reason: string | null = null): void {
  endedBecause.value = reason;
  set(null);
}

/**
 * The user's sign-out: the identity provider first revokes the session (RFC 7009), so a copy
 * of the refresh token taken before stops working too, then this tab forgets it. A failed
 * revocation (portal unreachable) still signs this tab out.
 */
export async function signOutAndRevoke(): Promise<void> {
  const current = tokens.peek();
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
  signOut();
}

let refreshing: Promise<boolean> | null = null;

/**
 * Trade the refresh token for new tokens, once however many callers ask at the same time
 * (a refresh token is single-use: a second use would revoke the whole family). False, and
 * signed out, when the identity provider refuses it.
 */
export function refreshTokens(): Promise<boolean> {
  const current = tokens.peek();
  if (current === null) return Promise.resolve(false);
  refreshing ??= tokenRequest({ grant_type: 'refresh_token', refresh_token: current.refreshToken })
    .then((t) => {
      set(t);
      return true;
    })
    .catch((err: unknown) => {
      // A network failure keeps the session: the next request or timer tries again.
      if (err instanceof ApiError && err.status === 0) return false;
      signOut('Your session has ended. Sign in again.');
      return false;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

// Refresh ahead of expiry: a fifth of the lifetime before, at most a minute, at least 5 s from now.
effect(() => {
  const t = tokens.value;
  if (t === null) return;
  const ahead = Math.min(60_000, (t.lifetime * 1000) / 5);
  const wait = Math.max(5_000, t.expiresAt - ahead - Date.now());
  const timer = setTimeout(() => void refreshTokens(), wait);
  return () => clearTimeout(timer);
});
