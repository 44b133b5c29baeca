"""Business rules as plain functions. They take what they need as arguments (never the request),
commit their own transactions, and raise `svc.errors.APIError` for rule violations."""
