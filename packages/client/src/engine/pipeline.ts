/**
 * @svc/client/engine/pipeline: a session's stages, its alerts and its two HTML files, and
 * nothing else loaded with them (bench/pipeline/run-once.ts measures their peak memory in a
 * process of its own).
 */
export { evaluateAlerts } from '../alerts/evaluate.ts';
export { ALERT_DEFAULTS } from '../alerts/settings.ts';
export { runStages, type StagesInput } from '../pipeline/run-stages.ts';
export { BRANDING_DEFAULTS } from '../report/branding.ts';
export { type Branding, renderExecSummary, renderReport, type TrendPoint } from '../report/index.ts';
