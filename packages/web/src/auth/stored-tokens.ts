import type { TokenResponse } from '@svc/protocol';

/** Where a tab keeps its tokens (sessionStorage: this tab, gone with it). */
export const TOKENS_STORAGE_KEY = 'svc.console.tokens';

/** The signed-in state as a tab holds it. */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds at which the access token expires. */
  expiresAt: number;
  /** Seconds the access token was issued for, to schedule the refresh at a share of it. */
  lifetime: number;
}

/** A token answer as held from `issuedAt` (epoch milliseconds) on. */
export function tokensOf(t: TokenResponse, issuedAt: number): Tokens {
  return {
    accessToken: t.access_token,
    refreshToken: t.refresh_token,
    expiresAt: issuedAt + t.expires_in * 1000,
    lifetime: t.expires_in,
  };
}
