"""The instance as its operators see it: administration, the audit log, usage, the scheduler's
lease."""
