"""Which payload format a webhook URL gets (docs/api.md §7)."""

from urllib.parse import urlsplit

JSON = "json"
SLACK = "slack"
DISCORD = "discord"
FORMATS = (JSON, SLACK, DISCORD)

_DISCORD_HOSTS = {"discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com"}


def detect_format(url: str | None) -> str:
    """`slack` for Slack incoming webhooks, `discord` for Discord webhooks, else `json`."""
    if not url:
        return JSON
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host == "hooks.slack.com":
        return SLACK
    if host in _DISCORD_HOSTS and parts.path.startswith("/api/webhooks/"):
        return DISCORD
    return JSON


def format_in_force(configured: str | None, url: str | None) -> str:
    return configured or detect_format(url)
