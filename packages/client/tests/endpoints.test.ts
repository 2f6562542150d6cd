import { describe, expect, it } from 'vitest';
import { deriveEndpoint, EndpointError } from '../src/kit/config/endpoints.ts';

describe('deriveEndpoint', () => {
  it('replaces the trailing /upload', () => {
    expect(deriveEndpoint('https://portal.example.com/api/upload', 'health')).toBe(
      'https://portal.example.com/api/health',
    );
    expect(deriveEndpoint('https://portal.example.com/api/upload/', 'license')).toBe(
      'https://portal.example.com/api/license',
    );
    expect(deriveEndpoint('http://127.0.0.1:8080/api/upload', 'agent-commands')).toBe(
      'http://127.0.0.1:8080/api/agent-commands',
    );
  });

  it('drops a query string and fragment so credentials in them are not carried over', () => {
    expect(deriveEndpoint('https://p.example/api/upload?x=1#y', 'health')).toBe('https://p.example/api/health');
  });

  it('refuses URLs that are not an upload URL', () => {
    expect(() => deriveEndpoint('not a url', 'health')).toThrow(EndpointError);
    expect(() => deriveEndpoint('ftp://p.example/api/upload', 'health')).toThrow('must use http or https');
    expect(() => deriveEndpoint('https://p.example/api/uploads', 'health')).toThrow('must end with /upload');
  });
});
