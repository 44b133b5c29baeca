"""The reporter's language: a report's locale as it is filed, and what svc says to the reporter
in it (contract §22 and its v6 changes; docs/widget.md, "Languages"): the status page and the
mails to a reporter speak the report's locale, falling back tag by tag to English.

The words live in gettext catalogs handled by Babel (svc/translations/<language>/LC_MESSAGES/
messages.po, compiled to .mo by the Makefile): `make translations-extract` collects the English
messages of the code and templates into messages.pot, `make translations-update` merges them
into every catalog, and `make run` and `make test` compile them. A message's placeholders are
named in braces (`{tracking_id}`) and filled after translation, so a translator may move them.
"""

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from babel import Locale
from babel.dates import format_date, format_time
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

# The languages svc speaks to reporters; English is the messages themselves.
LANGUAGES = ("en", "de", "fr", "es", "pt-BR", "it", "nl", "pl", "ja", "zh-CN", "ar")
RIGHT_TO_LEFT = frozenset({"ar"})
DEFAULT = "en"
CATALOGS = Path(__file__).resolve().parent / "translations"
# Where a language has no catalog of its own but one of ours serves its readers.
_NEAREST = {"pt": "pt-BR", "zh": "zh-CN", "zh-Hans": "zh-CN"}
# Chinese written in traditional characters: Simplified is not what its readers read.
_TRADITIONAL = re.compile(r"^zh-(Hant|TW|HK|MO)\b", re.I)


def N_(message: str) -> str:
    """A message to translate later, where it is defined (`make translations-extract` looks
    for this name); it returns the English as it is."""
    return message


@functools.cache
def spoken() -> tuple[str, ...]:
    """The languages of LANGUAGES that have a compiled catalog here, English always."""
    return tuple(
        language
        for language in LANGUAGES
        if language == DEFAULT or (_folder(language) / "LC_MESSAGES" / "messages.mo").is_file()
    )


def language_of(tag: str | None) -> str:
    """The language spoken here that serves a BCP 47 tag: the tag itself, else the tag with
    its last subtag removed, and so on (de-AT-x-foo, de-AT, de); else English."""
    if not tag or _TRADITIONAL.match(tag):
        return DEFAULT
    known = {language.lower(): language for language in spoken()}
    parts = tag.split("-")
    while parts:
        candidate = "-".join(parts)
        if candidate.lower() in known:
            return known[candidate.lower()]
        if _NEAREST.get(candidate) in known.values():
            return _NEAREST[candidate]
        parts.pop()
    return DEFAULT


class _Unfilled(dict):
    def __missing__(self, name: str) -> str:
        return "{" + name + "}"


@dataclass(frozen=True)
class Speaker:
    """Words, dates and the page direction of one language."""

    language: str
    translations: NullTranslations

    @property
    def direction(self) -> str:
        return "rtl" if self.language in RIGHT_TO_LEFT else "ltr"

    def __call__(self, message: str, **values) -> str:
        """The message in this language, its {placeholders} filled; one not given stays as it
        is, for a page's script to fill."""
        return self.translations.gettext(message).format_map(_Unfilled(values))

    def plural(self, one: str, many: str, count: int, **values) -> str:
        """By the language's own plural rule (Polish and Arabic have several forms)."""
        translated = self.translations.ngettext(one, many, count)
        return translated.format_map(_Unfilled(values, count=count))

    def moment(self, value: datetime) -> str:
        """A date and time to the minute as the language writes them, in UTC: its long date
        and short time, joined as the language joins them."""
        locale = _babel_locale(self.language)
        value = value.replace(tzinfo=value.tzinfo or UTC)
        time = format_time(value, "short", tzinfo=UTC, locale=locale)
        return locale.datetime_formats["medium"].format(time, format_date(value, "long", locale))


def speaker(language: str) -> Speaker:
    """The Speaker of a language of LANGUAGES (or of a tag, through language_of). Kept per
    language served, never per tag: a tag is a client's input (Accept-Language), and a cache
    keyed by it grows with every new one (contract v6)."""
    return _speaker_of(language_of(language))


@functools.cache  # at most one entry per language of LANGUAGES
def _speaker_of(language: str) -> Speaker:
    if language == DEFAULT:
        return Speaker(DEFAULT, NullTranslations())
    found = Translations.load(str(CATALOGS), [_folder(language).name], domain="messages")
    return Speaker(language, found)


# --- the widget's words (GET /widget-<locale>.json) ---------------------------------------------

# The widget's messages are a catalog of their own (domain "widget", from widget.js), so that
# what the browser downloads is the widget's words alone; this template lists them.
WIDGET_TEMPLATE = CATALOGS / "widget.pot"


def widget_words(language: str) -> dict:
    """The widget's messages in a language of LANGUAGES (or a tag's, through language_of),
    for the widget to fetch beside /widget.js (docs/widget.md, "Languages"); the route keeps
    each language's answer (svc.widget)."""
    language = language_of(language)
    if language == DEFAULT:
        return words_in(DEFAULT, NullTranslations())
    found = Translations.load(str(CATALOGS), [_folder(language).name], domain="widget")
    return words_in(language, found)


def words_in(language: str, translations: NullTranslations) -> dict:
    """Every message of the widget's template as `translations` says it. A plural message is
    said once per plural category of the language (CLDR's, which the browser's
    Intl.PluralRules names too), keyed by its English singular."""
    with WIDGET_TEMPLATE.open("rb") as file:
        template = read_po(file)
    samples = _plural_samples(language)
    messages, plurals = {}, {}
    for message in template:
        if not message.id:
            continue
        if message.pluralizable:
            one, many = message.id
            plurals[one] = {
                category: translations.ngettext(one, many, count)
                for category, count in samples.items()
            }
        else:
            messages[message.id] = translations.gettext(message.id)
    direction = "rtl" if language in RIGHT_TO_LEFT else "ltr"
    return {"locale": language, "dir": direction, "messages": messages, "plurals": plurals}


def _plural_samples(language: str) -> dict[str, int]:
    """A whole number of each plural category of the language: {"one": 1, "few": 2, ...}."""
    rule = _babel_locale(language).plural_form
    samples: dict[str, int] = {}
    for count in (*range(201), 1000, 1_000_000):
        samples.setdefault(rule(count), count)
    # Where "other" is for fractions only (Polish), the widget still needs one to fall back on.
    samples.setdefault("other", 100)
    return samples


def _babel_locale(language: str) -> Locale:
    return Locale.parse(language, sep="-")


def _folder(language: str) -> Path:
    """A language's catalog folder, named as gettext names locales: pt_BR, zh_CN."""
    return CATALOGS / language.replace("-", "_")


# --- a report's locale (docs/api.md §8.1): checked, never guessed --------------------------------

LOCALE_MAX_LENGTH = 35
# language (2-3 letters), then subtags of 1-8 letters or digits: de, de-AT, zh-Hans-CN, pt-BR.
# Matched whole (fullmatch: `$` alone lets a final line break through).
_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")


def usable(tag) -> str | None:
    """The tag written as BCP 47 writes it (de-AT, zh-Hans), or None when it is not one."""
    if not isinstance(tag, str) or len(tag) > LOCALE_MAX_LENGTH or not _TAG.fullmatch(tag):
        return None
    language, *subtags = tag.replace("_", "-").split("-")
    shaped = [language.lower()]
    for subtag in subtags:
        if len(subtag) == 2 and subtag.isalpha():
            shaped.append(subtag.upper())  # a region: AT
        elif len(subtag) == 4 and subtag.isalpha():
            shaped.append(subtag.title())  # a script: Hans
        else:
            shaped.append(subtag.lower())
    return "-".join(shaped)


def locale_of_request(sent, accept_languages) -> str:
    """The report's locale: what the widget sent, else the request's best Accept-Language (a
    werkzeug LanguageAccept), else DEFAULT."""
    return usable(sent) or usable(accept_languages.best) or DEFAULT
