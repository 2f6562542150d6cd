export function buildImage(): string { throw new Error('not yet'); }
