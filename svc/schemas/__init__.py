"""marshmallow schemas per resource: *In (snake_case, strict) and *Out (camelCase)."""
