"""The reporter's language (docs/api.md §8.1, contract §22): a BCP 47 tag kept with each
report, for what svc says to its reporter. Checked here, never guessed: a tag that is not one
is "en"."""

import re

DEFAULT = "en"
MAX_LENGTH = 35
# language (2-3 letters), then subtags of 1-8 letters or digits: de, de-AT, zh-Hans-CN, pt-BR.
_TAG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$")


def usable(tag) -> str | None:
    """The tag written as BCP 47 writes it (de-AT, zh-Hans), or None when it is not one."""
    if not isinstance(tag, str) or len(tag) > MAX_LENGTH or not _TAG.match(tag):
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


def of_request(sent, accept_languages) -> str:
    """The report's locale: what the widget sent, else the request's best Accept-Language (a
    werkzeug LanguageAccept), else DEFAULT."""
    return usable(sent) or usable(accept_languages.best) or DEFAULT
