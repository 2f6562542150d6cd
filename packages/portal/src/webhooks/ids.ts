import { randomBytes } from 'node:crypto';

export const newSubscriptionId = () => `whsub_${randomBytes(6).toString('hex')}`;
export const newSigningSecret = () => randomBytes(32).toString('hex');
export const newEventId = () => `evt_${randomBytes(8).toString('hex')}`;
