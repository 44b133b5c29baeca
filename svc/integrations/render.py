"""An issue's body in each tracker's markup: Markdown (GitHub, GitLab, Linear), Atlassian
Document Format (Jira Cloud), wiki text (Jira Server / Data Center). Long parts are cut with a
note saying so; the document around them stays whole."""

import re

from svc.integrations.base import Content

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
    parts = [cut(content.description, DESCRIPTION_LIMIT) or "_No description._", ""]
    parts += [f"- **{name}:** {_md_inline(value)}" for name, value in content.facts]
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


def _md_inline(value: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", cut(value, ITEM_LIMIT))


def wiki(content: Content) -> str:
    parts = [_wiki_text(cut(content.description, DESCRIPTION_LIMIT)) or "_No description._", ""]
    parts += [f"* *{name}:* {_wiki_text(cut(value, ITEM_LIMIT))}" for name, value in content.facts]
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
