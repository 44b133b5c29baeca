// The enumerations of the API (docs/api.md), in the order the dashboard offers them.

export const STATUSES = ["new", "in_progress", "resolved", "closed"];
export const SEVERITIES = ["low", "medium", "high", "critical"];
export const CATEGORIES = ["bug", "ui", "performance", "crash", "other"];
export const ROLES = ["owner", "member", "viewer"];
// The issue trackers a project can connect (docs/integrations.md).
export const TRACKERS = ["github", "gitlab", "jira", "linear"];
export const SORTS = [
  ["-created_at", "Newest first"],
  ["created_at", "Oldest first"],
  ["-updated_at", "Recently updated"],
  ["updated_at", "Least recently updated"],
  ["-severity", "Most severe first"],
  ["severity", "Least severe first"],
];
export const WEBHOOK_FORMATS = [
  ["", "Detect from the URL"],
  ["json", "JSON (signed event)"],
  ["slack", "Slack"],
  ["discord", "Discord"],
];
export const WIDGET_POSITIONS = [
  ["bottom-right", "Bottom right"],
  ["bottom-left", "Bottom left"],
  ["top-right", "Top right"],
  ["top-left", "Top left"],
];
// The reporters' language (settings.widget.locale): each one's own, or one for all of them; the
// languages svc speaks to reporters (svc/i18n.py LANGUAGES), each in its own words.
export const REPORTER_LANGUAGES = [
  ["auto", "Each reporter's own (their browser's)"],
  ["en", "English"], ["de", "Deutsch"], ["fr", "Français"], ["es", "Español"],
  ["pt-BR", "Português (Brasil)"], ["it", "Italiano"], ["nl", "Nederlands"], ["pl", "Polski"],
  ["ja", "日本語"], ["zh-CN", "中文（简体）"], ["ar", "العربية"],
];
// The widget's switches (settings.widget), in the order the settings page shows them.
export const WIDGET_SWITCHES = [
  ["enable_screenshot", "enableScreenshot", "Screenshots (capture the page or attach an image)"],
  ["capture_console", "captureConsole", "Console messages and uncaught errors"],
  ["capture_network", "captureNetwork", "Network requests (method, address, status)"],
  ["capture_network_details", "captureNetworkDetails", "Request and response details: headers (never secret ones) and bodies up to 10 KB"],
  ["capture_actions", "captureActions", "Clicks, typing (never what was typed) and page changes"],
  ["enable_session_recording", "enableSessionRecording", "Session recording: the list of clicks and page changes (not a replay; off: none at all, whatever the switch above)"],
  ["show_watermark", "showWatermark", "Show \u201cBug reports by svc\u201d in the dialog"],
];
// What the audit log records (docs/api.md §14), alphabetically as svc/audit.py has them.
export const AUDIT_ACTIONS = [
  "account_created", "admin_granted", "admin_revoked", "api_key_rotated", "instance_restored",
  "integration_created", "integration_deleted", "integration_updated", "invitation_created",
  "invitation_resent", "invitation_revoked", "issue_created", "member_joined", "member_left",
  "member_removed", "member_role_changed", "password_changed", "password_reset", "project_created",
  "project_deleted", "project_updated", "recovery_code_used", "recovery_codes_created",
  "report_changed", "report_deleted", "reporter_data_erased", "reporter_data_exported", "reports_exported",
  "reset_link_sent", "retention_applied", "second_factor_added", "second_factor_removed",
  "second_factors_reset", "sign_in", "sign_in_failed", "sign_out", "sso_linked",
  "status_link_renewed", "token_created", "token_revoked", "user_deactivated", "user_reactivated",
  "webhook_secret_rotated",
];
