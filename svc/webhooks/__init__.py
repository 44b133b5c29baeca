"""Outgoing webhooks: payloads, signatures, chat formats and delivery."""
