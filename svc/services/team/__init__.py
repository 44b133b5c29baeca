"""What the team hears: notifications by mail, the webhook delivery log."""
