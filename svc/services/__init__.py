"""Business rules as plain functions. They take what they need as arguments (never the request),
commit their own transactions, and raise the domain errors of `svc.errors` (not found,
conflict, invalid…) for rule violations, never an HTTP status: `svc.errors` maps them."""
