import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.ts';
import * as m0002 from './0002_sessions.ts';
import * as m0003 from './0003_agents.ts';
import * as m0004 from './0004_webhooks.ts';
import * as m0005 from './0005_delivery_attempts_inline.ts';
import * as m0006 from './0006_login_failures.ts';
import * as m0007 from './0007_sessions_per_client.ts';
import * as m0008 from './0008_agents_per_client.ts';
import * as m0009 from './0009_delivery_client.ts';
import * as m0010 from './0010_identity_hardening.ts';
import * as m0011 from './0011_webhook_secret_encryption.ts';
import * as m0012 from './0012_storage_usage.ts';
import * as m0013 from './0013_session_scan_facts.ts';
import * as m0014 from './0014_findings_index.ts';
import * as m0015 from './0015_vuln_feeds.ts';
import * as m0016 from './0016_findings_kev_epss.ts';
import * as m0017 from './0017_findings_of_record.ts';
import * as m0018 from './0018_session_first_upload.ts';
import * as m0019 from './0019_delivery_leases.ts';
import * as m0020 from './0020_share_token_hashes.ts';
import * as m0021 from './0021_findings_posture_indexes.ts';
import * as m0022 from './0022_findings_sort_orders.ts';
import * as m0023 from './0023_command_progress.ts';
import * as m0024 from './0024_vuln_debian_and_index_format.ts';
import * as m0025 from './0025_command_lifecycle.ts';
import * as m0026 from './0026_portal_schedules.ts';
import * as m0027 from './0027_running_commands.ts';
import * as m0028 from './0028_session_run_id.ts';
import * as m0029 from './0029_session_counts.ts';
import * as m0030 from './0030_session_search_and_sorts.ts';
import * as m0031 from './0031_audit_type_index.ts';
import * as m0032 from './0032_audit_event_hours.ts';
import * as m0033 from './0033_sessions_trend_index.ts';
import * as m0034 from './0034_finding_records_fillfactor.ts';
import * as m0035 from './0035_target_latest_risk.ts';
import * as m0036 from './0036_webhook_outbox.ts';
import * as m0037 from './0037_findings_index_cascade.ts';
import * as m0038 from './0038_findings_index_unused.ts';
import * as m0039 from './0039_finding_records_host_index.ts';
import * as m0040 from './0040_finding_detail_pages.ts';
import * as m0041 from './0041_session_index_pending.ts';
import * as m0042 from './0042_finding_records_open.ts';
import * as m0043 from './0043_session_due_counts.ts';
import * as m0044 from './0044_finding_targets_without_records.ts';

/**
 * Every migration, listed explicitly and in order. Names sort lexically; a migration
 * is frozen once it has shipped.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_sessions': m0002,
  '0003_agents': m0003,
  '0004_webhooks': m0004,
  '0005_delivery_attempts_inline': m0005,
  '0006_login_failures': m0006,
  '0007_sessions_per_client': m0007,
  '0008_agents_per_client': m0008,
  '0009_delivery_client': m0009,
  '0010_identity_hardening': m0010,
  '0011_webhook_secret_encryption': m0011,
  '0012_storage_usage': m0012,
  '0013_session_scan_facts': m0013,
  '0014_findings_index': m0014,
  '0015_vuln_feeds': m0015,
  '0016_findings_kev_epss': m0016,
  '0017_findings_of_record': m0017,
  '0018_session_first_upload': m0018,
  '0019_delivery_leases': m0019,
  '0020_share_token_hashes': m0020,
  '0021_findings_posture_indexes': m0021,
  '0022_findings_sort_orders': m0022,
  '0023_command_progress': m0023,
  '0024_vuln_debian_and_index_format': m0024,
  '0025_command_lifecycle': m0025,
  '0026_portal_schedules': m0026,
  '0027_running_commands': m0027,
  '0028_session_run_id': m0028,
  '0029_session_counts': m0029,
  '0030_session_search_and_sorts': m0030,
  '0031_audit_type_index': m0031,
  '0032_audit_event_hours': m0032,
  '0033_sessions_trend_index': m0033,
  '0034_finding_records_fillfactor': m0034,
  '0035_target_latest_risk': m0035,
  '0036_webhook_outbox': m0036,
  '0037_findings_index_cascade': m0037,
  '0038_findings_index_unused': m0038,
  '0039_finding_records_host_index': m0039,
  '0040_finding_detail_pages': m0040,
  '0041_session_index_pending': m0041,
  '0042_finding_records_open': m0042,
  '0043_session_due_counts': m0043,
  '0044_finding_targets_without_records': m0044,
};
