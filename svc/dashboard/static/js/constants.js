// The enumerations of the API (docs/api.md), in the order the dashboard offers them.

export const STATUSES = ["new", "in_progress", "resolved", "closed"];
export const SEVERITIES = ["low", "medium", "high", "critical"];
export const CATEGORIES = ["bug", "ui", "performance", "crash", "other"];
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
