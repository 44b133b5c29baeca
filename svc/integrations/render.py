"""An issue's body in each tracker's markup: Markdown (GitHub, GitLab, Linear), Atlassian
Document Format (Jira Cloud), wiki text (Jira Server / Data Center). Long parts are cut with a
note saying so; the document around them stays whole."""

import re

from svc.integrations.base import Content
from svc.wire import one_line

# Beside the trackers' limits (Jira: 32,767 characters, GitHub: 65,536), with room for the rest.
DESCRIPTION_LIMIT = 6000
ITEM_LIMIT = 300


def cut(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" … [cut: {len(text) - limit} more characters, see the report]"


def _longest_run(text: str, char: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)


def markdown(content: Content) -> str:
    """The reporter's words (the description, the facts) as text wherever the Markdown is
    rendered (markdown_text); the lists in fenced blocks; links of svc's own."""
    description = markdown_text(cut(content.description, DESCRIPTION_LIMIT))
    parts = [description or "_No description._", ""]
    parts += [
        f"- **{name}:** {markdown_text(cut(value, ITEM_LIMIT), single_line=True)}"
        for name, value in content.facts
    ]
    for title, items in content.lists:
        if not items:
            continue
        block = "\n".join(cut(item, ITEM_LIMIT) for item in items)
        # A fence longer than any run of backticks inside, so that nothing closes it early.
        fence = "`" * max(3, _longest_run(block, "`") + 1)
        parts += ["", f"### {title}", "", fence, block, fence]
    if content.links:
        parts += ["", *(f"- [{name}]({url})" for name, url in content.links)]
    return "\n".join(parts) + "\n"


# Markdown's punctuation that starts markup somewhere in a line (`=` and `-` under a line make
# it a heading, `+`, `-` and `1.` a list, `!` an image, `|` a table cell).
_MARKUP = re.compile(r"([\\`*_\[\]{}()<>#+\-.!|~=])")
# What renderers turn into a link or a notification with no markup at all: bare addresses
# (GitHub's and GitLab's autolinks), e-mail addresses and @mentions.
_LIVE = re.compile(
    r"(?i)(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>]*"
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![\w@])@[\w][\w.-]*"
)


def markdown_text(text: str, single_line: bool = False) -> str:
    """Text a reporter wrote, rendered by any Markdown as that text (contract v6): every
    character of Markdown's markup escaped, addresses and @mentions inside code spans (no
    link, no notification), and with `single_line` no line break (no setext heading, no forged
    list line). Used for the "Copy as Markdown" export and every tracker's Markdown body."""
    if single_line:
        text = one_line(text)
    written, at = [], 0
    for live in _LIVE.finditer(text):
        written += [_MARKUP.sub(r"\\\1", text[at : live.start()]), _code_span(live.group())]
        at = live.end()
    written.append(_MARKUP.sub(r"\\\1", text[at:]))
    return "".join(written)


def _code_span(text: str) -> str:
    fence = "`" * (_longest_run(text, "`") + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def wiki(content: Content) -> str:
    parts = [_wiki_text(cut(content.description, DESCRIPTION_LIMIT)) or "_No description._", ""]
    parts += [
        f"* *{name}:* {_wiki_text(one_line(cut(value, ITEM_LIMIT)))}"
        for name, value in content.facts
    ]
    for title, items in content.lists:
        if not items:
            continue
        block = "\n".join(cut(item, ITEM_LIMIT) for item in items)
        parts += [
            "",
            f"h3. {title}",
            "{noformat}",
            block.replace("{noformat}", "{ noformat}"),
            "{noformat}",
        ]
    if content.links:
        parts += ["", *(f"* [{_wiki_text(name)}|{url}]" for name, url in content.links)]
    return "\n".join(parts) + "\n"


def _wiki_text(text: str) -> str:
    """Wiki markup's own escape: a backslash before what would start markup."""
    return re.sub(r"([\\{}\[\]|*_+^~?!-])", r"\\\1", text)


def adf(content: Content) -> dict:
    """An ADF document (version 1): paragraphs, a bullet list of facts, headings with code
    blocks, and links. ADF refuses empty text nodes, so none is made."""
    nodes = [_paragraph(cut(content.description, DESCRIPTION_LIMIT) or "No description.")]
    if content.facts:
        nodes.append(
            {
                "type": "bulletList",
                "content": [
                    _list_item(
                        [_text(f"{name}: ", strong=True), _text(cut(value, ITEM_LIMIT) or "-")]
                    )
                    for name, value in content.facts
                ],
            }
        )
    for title, items in content.lists:
        if not items:
            continue
        nodes.append({"type": "heading", "attrs": {"level": 3}, "content": [_text(title)]})
        block = "\n".join(cut(item, ITEM_LIMIT) for item in items)
        nodes.append({"type": "codeBlock", "content": [_text(block)]})
    if content.links:
        nodes.append(
            {
                "type": "bulletList",
                "content": [_list_item([_text(name, href=url)]) for name, url in content.links],
            }
        )
    return {"version": 1, "type": "doc", "content": nodes}


def _text(text: str, strong: bool = False, href: str | None = None) -> dict:
    node = {"type": "text", "text": text}
    marks = []
    if strong:
        marks.append({"type": "strong"})
    if href:
        marks.append({"type": "link", "attrs": {"href": href}})
    if marks:
        node["marks"] = marks
    return node


def _paragraph(text: str) -> dict:
    # Lines become hard breaks: ADF text nodes hold no newlines of their own.
    content = []
    for number, line in enumerate(text.split("\n")):
        if number:
            content.append({"type": "hardBreak"})
        if line:
            content.append(_text(line))
    return {"type": "paragraph", "content": content}


def _list_item(inline: list[dict]) -> dict:
    return {"type": "listItem", "content": [{"type": "paragraph", "content": inline}]}
