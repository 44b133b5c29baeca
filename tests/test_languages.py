"""The reporter's language (contract v5 §22, svc/i18n.py): the status page and the mails to a
reporter speak the report's locale, falling back tag by tag to English; the catalogs hold
every message the code and the page say, with the same placeholders."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from harness.client import create_project, csrf, invite, register
from svc import i18n
from tests.helpers import file_report, pseudo, send_due, text_of

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / "svc" / "translations"
# Each domain's template and where its messages are found (the Makefile's translations-extract).
DOMAINS = {"messages": ROOT / "babel.cfg", "widget": ROOT / "babel-widget.cfg"}
KEYWORDS = {**DEFAULT_KEYWORDS, "speak": None, "speakPlural": (1, 2), "N_": None}
PLACEHOLDER = re.compile(r"\{(\w*)\}")
STATUS_LINK = re.compile(r"https://bugs\.example\.com(/status/[\w-]+)")


def english_messages(domain: str) -> set:
    """What `make translations-extract` finds for a domain now (a plural message: a pair)."""
    with DOMAINS[domain].open() as mapping:
        method_map, options_map = parse_mapping_cfg(mapping)
    found = extract_from_dir(str(ROOT), method_map, options_map, keywords=KEYWORDS)
    return {message for _file, _line, message, _comments, _context in found}


def placeholders(text) -> set[str]:
    return set(PLACEHOLDER.findall(" ".join(text) if isinstance(text, tuple) else text))


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_template_and_every_catalog_hold_every_message_with_its_placeholders(domain):
    said = english_messages(domain)
    assert said, "no message found"
    with (TRANSLATIONS / f"{domain}.pot").open("rb") as template:
        assert {m.id for m in read_po(template) if m.id} == said, "run make translations-extract"
    catalogs = sorted(TRANSLATIONS.glob(f"*/LC_MESSAGES/{domain}.po"))
    assert {path.parent.parent.name.replace("_", "-") for path in catalogs} == set(
        i18n.LANGUAGES
    ) - {i18n.DEFAULT}, "a language without its catalog"
    for path in catalogs:
        with path.open("rb") as file:
            catalog = read_po(file)
        translated = {m.id: m for m in catalog if m.id}
        assert set(translated) == said, f"{path}: run make translations-update"
        for message_id, message in translated.items():
            forms = message.string if isinstance(message.string, tuple) else (message.string,)
            assert all(forms) and not message.fuzzy, f"{path}: {message_id!r} untranslated"
            if message.pluralizable:
                assert len(forms) == catalog.num_plurals, f"{path}: {message_id!r} forms"
            for form in forms:
                assert placeholders(form) == placeholders(message_id), (
                    f"{path}: {message_id!r} has other placeholders"
                )


@pytest.mark.parametrize(
    "tag, language",
    [("de", "de"), ("de-AT", "de"), ("DE-at-x-private", "de"), ("xx", "en"), (None, "en"),
     ("zh-TW", "en"), ("en-GB", "en")],
)  # fmt: skip
def test_a_tag_falls_back_subtag_by_subtag_to_english(tag, language):
    assert i18n.language_of(tag) == language


@pytest.mark.parametrize("sent", ["de\n", "de\x00", "de-\u00e9", "d", "de-AT\r\n"])
def test_a_locale_is_a_tag_matched_whole(sent):
    assert i18n.usable(sent) is None


def test_a_locale_that_cannot_be_stored_is_dropped_not_refused(app):
    """Contract v6: a bad locale (NUL included) is never a 422; it becomes English."""
    client = app.test_client()
    register(client)
    project = create_project(client)
    for sent in ("de\x00", "de\n", {"not": "a tag"}):
        filed = file_report(client, project["apiKey"], locale=sent)
        assert filed.status_code == 201, filed.get_json()
        shown = client.get(f"/api/v1/reports/{filed.get_json()['trackingId']}").get_json()
        assert shown["locale"] == "en"


def test_pages_keyed_by_accept_language_keep_one_entry_per_language_served(app):
    """Contract v6: 9,000 distinct tags grew each worker by 57 MB; now the 404 status page and
    the unsubscribe page, asked in 300 tags, keep at most one speaker per language."""
    client = app.test_client()
    for number in range(300):
        tag = f"de-x-{number:05d}" if number % 2 else f"xx-{number:05d}"
        for page in ("/status/nothing-here", "/unsubscribe/nothing-here"):
            answer = client.get(page, headers={"Accept-Language": tag})
            assert answer.status_code < 500
    assert i18n._speaker_of.cache_info().currsize <= len(i18n.LANGUAGES)


@pytest.fixture
def updating_shop(mail_app, smtp_server):
    ada = mail_app.test_client()
    register(ada)
    project = create_project(ada)
    settings = {"settings": {"reporter_updates": {"enabled": True}}}
    changed = ada.patch(f"/api/v1/projects/{project['id']}", json=settings, headers=csrf(ada))
    assert changed.status_code == 200
    send_due(mail_app)
    with smtp_server.lock:
        smtp_server.messages.clear()
    ada.project, ada.smtp = project, smtp_server
    return ada


def mails(updating_shop) -> list:
    send_due(updating_shop.application)
    with updating_shop.smtp.lock:
        found = list(updating_shop.smtp.messages)
        updating_shop.smtp.messages.clear()
    return found


def test_a_reporter_whose_browser_says_de_at_reads_german_and_xx_reads_english(
    updating_shop,
):
    file_report(
        updating_shop,
        updating_shop.project["apiKey"],
        reporter_identifier="rep@example.com",
        headers={"Accept-Language": "de-AT,de;q=0.9"},
    )
    file_report(
        updating_shop,
        updating_shop.project["apiKey"],
        reporter_identifier="other@example.com",
        locale="xx",
    )
    german, english = sorted(mails(updating_shop), key=lambda mail: mail["To"] != "rep@example.com")
    assert german["Subject"] == "[Web Shop] Wir haben Ihre Meldung WS-1 erhalten"
    assert german["Content-Language"] == "de"
    assert "Danke, dass Sie uns ein Problem mit Web Shop gemeldet haben." in text_of(german)
    assert english["Subject"] == "[Web Shop] We received your report WS-2"
    assert english["Content-Language"] == "en"

    page = updating_shop.get(STATUS_LINK.search(text_of(german))[1]).get_data(as_text=True)
    assert '<html lang="de" dir="ltr">' in page
    assert "eingegangen, noch nicht angesehen" in page and "Unterhaltung" in page
    assert (
        updating_shop.get(STATUS_LINK.search(text_of(english))[1])
        .get_data(as_text=True)
        .count('<html lang="en" dir="ltr">')
        == 1
    )

    updating_shop.patch(
        "/api/v1/reports/WS-1", json={"status": "resolved"}, headers=csrf(updating_shop)
    )
    [resolved] = mails(updating_shop)
    assert resolved["Subject"] == "[Web Shop] WS-1: behoben"
    assert "ist jetzt behoben" in text_of(resolved)
    page = updating_shop.get(STATUS_LINK.search(text_of(resolved))[1]).get_data(as_text=True)
    assert "Tritt es noch auf?" in page
    # A page that does not exist speaks the visitor's language.
    gone = updating_shop.get("/status/nothing", headers={"Accept-Language": "de"})
    assert gone.status_code == 404 and "Diese Statusseite gibt es nicht." in gone.get_data(True)


def test_a_reporters_unsubscribe_page_speaks_the_visitors_language(updating_shop):
    file_report(
        updating_shop,
        updating_shop.project["apiKey"],
        reporter_identifier="rep@example.com",
        locale="fr",
    )
    [receipt] = mails(updating_shop)
    link = re.search(r"https://bugs\.example\.com(/unsubscribe/\S+)", text_of(receipt))[1]
    page = updating_shop.get(link, headers={"Accept-Language": "fr-CH, en;q=0.5"})
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.headers["Content-Language"] == "fr"
    assert '<html lang="fr" dir="ltr">' in html and "Ne plus recevoir ces e-mails" in html
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    # Opening it changed nothing; the button's POST (as a mail program's) does.
    assert updating_shop.post(link).get_json() == {
        "email": "rep@example.com",
        "projectName": "Web Shop",
    }
    arabic = updating_shop.get(link, headers={"Accept-Language": "ar"}).get_data(as_text=True)
    assert '<html lang="ar" dir="rtl">' in arabic and "إيقاف هذه الرسائل" in arabic


class _Texts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.texts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style", "time")
        self.texts += [value for name, value in attrs if name in ("data-failed",) and value]

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style", "time")

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.texts.append(data.strip())


def test_no_english_is_left_on_the_status_page_or_in_a_mail_in_a_pseudo_language(
    updating_shop, monkeypatch
):
    class Pseudo(i18n.Speaker):
        def __call__(self, message, **values):
            return pseudo(message).format(**values)

    monkeypatch.setattr(i18n, "speaker", lambda _tag: Pseudo("en", None))
    file_report(
        updating_shop,
        updating_shop.project["apiKey"],
        reporter_identifier="rep@example.com",
    )
    [receipt] = mails(updating_shop)
    subject, body = receipt["Subject"], text_of(receipt)
    assert subject.startswith("⟦[Web Shop] We received") and subject.endswith("⟧")
    lines = [line for line in body.splitlines() if line.strip() and line != "--"]
    assert all(line.startswith("⟦") and line.endswith("⟧") for line in lines), lines

    page = updating_shop.get(STATUS_LINK.search(body)[1]).get_data(as_text=True)
    texts = _Texts()
    texts.feed(page)
    # What the report itself says (its id, title, project) is the reporter's, not svc's.
    own = {"WS-1", "Checkout button does nothing", "Web Shop", "WS-1: Checkout button does nothing"}
    left = [text for text in texts.texts if text not in own and not text.startswith("⟦")]
    assert left == [], left


def test_a_project_may_speak_one_language_to_every_reporter(user_client):
    """settings.widget.locale (docs/api.md §7.3): auto, or one tag for every report."""
    project = create_project(user_client)
    url = f"/api/v1/projects/{project['id']}"

    def fix(locale):
        body = {"settings": {"widget": {"locale": locale}}}
        return user_client.patch(url, json=body, headers=csrf(user_client))

    assert project["settings"]["widget"]["locale"] == "auto"
    for wrong in ("xx yy", "", "english", 7):
        assert fix(wrong).status_code == 422, wrong
    assert fix("pt_br").get_json()["settings"]["widget"]["locale"] == "pt-BR"
    filed = file_report(user_client, project["apiKey"], locale="fr")
    assert filed.get_json()["locale"] == "pt-BR"
    assert fix("auto").status_code == 200
    assert file_report(user_client, project["apiKey"], locale="fr").get_json()["locale"] == "fr"


def test_every_mails_html_part_says_its_language_and_direction(updating_shop):
    """An Arabic receipt's HTML part read left to right in mail programs: it said neither its
    language nor its direction."""
    for reporter, locale in (("ar@example.com", "ar"), ("de@example.com", "de-AT")):
        file_report(updating_shop, updating_shop.project["apiKey"], reporter_identifier=reporter,
                    locale=locale)  # fmt: skip
    received = {mail["To"]: mail for mail in mails(updating_shop)}
    arabic = received["ar@example.com"].get_body(("html",)).get_content()
    german = received["de@example.com"].get_body(("html",)).get_content()
    assert arabic.startswith('<!doctype html><html lang="ar" dir="rtl">')
    assert german.startswith('<!doctype html><html lang="de" dir="ltr">')
    # A mail to a member (an invitation here) is English, and says so.
    invite(updating_shop, updating_shop.project["id"], "new@example.com")
    [invitation] = [mail for mail in mails(updating_shop) if mail["To"] == "new@example.com"]
    assert (
        invitation.get_body(("html",))
        .get_content()
        .startswith('<!doctype html><html lang="en" dir="ltr">')
    )
