"""Mail (docs/api.md §3 and §4): messages composed with the standard library's `email` package,
kept in a durable outbox in the database and sent by the scheduler over SMTP."""
