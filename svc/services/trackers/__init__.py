"""Issue trackers: integrations, the calls made to them, the events they send."""
