"""What the commands print: JSON for scripts, plain aligned text for people."""

import json
import re

import click

_WIDEST = 60  # a cell longer than this is cut (tables only; --json has everything)
# What a terminal acts on rather than shows: C0 controls but tab and newline, DEL, the C1
# controls, and the bidirectional controls that reorder a line (it can read as another). A
# report's text is anyone's who has the publishable key: an OSC sequence in a title could write
# the clipboard, retitle the window or overwrite lines.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
# JSON escapes the C0 controls itself; with ensure_ascii=False it leaves the others raw.
_RAW_IN_JSON = re.compile(f"[\x7f-\x9f{_BIDI}]")


def _escaped(found: re.Match) -> str:
    return f"\\u{ord(found[0]):04x}"


def for_terminal(data: bytes) -> bytes:
    """A downloaded file as a terminal may show it: every control character but tab and
    newline written as `\\uXXXX` text (a file written with -o keeps the server's bytes)."""
    return _CONTROLS.sub(_escaped, data.decode("utf-8", "replace")).encode()


def printable(text: str) -> str:
    """`text` without the control characters a terminal would act on."""
    return _CONTROLS.sub("", text)


def say(text: str, err: bool = False) -> None:
    click.echo(printable(text), err=err)


def as_json(data, indent: int | None = 2) -> str:
    """JSON as the API answered it, with every control character escaped."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _RAW_IN_JSON.sub(_escaped, text)


def emit(json_wanted: bool, data, text) -> None:
    """`data` as JSON with --json, else the text `text()` makes of it."""
    click.echo(as_json(data) if json_wanted else printable(text()))


def _cell(value) -> str:
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= _WIDEST else text[: _WIDEST - 1] + "…"


def table(rows: list[dict], columns: tuple[tuple[str, str], ...]) -> str:
    """Columns (key, heading), padded to their widest cell; "(none)" when there are no rows."""
    if not rows:
        return "(none)"
    cells = [[heading for _, heading in columns]]
    cells += [[_cell(row.get(key)) for key, _ in columns] for row in rows]
    widths = [max(len(line[index]) for line in cells) for index in range(len(columns))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in cells
    )


def fields_table(pairs: list[tuple[str, object]]) -> str:
    """(label, value) pairs as aligned lines; an empty value reads "none"."""
    width = max(len(label) for label, _ in pairs)
    return "\n".join(
        f"{label.ljust(width)}  {_cell(value) if value not in (None, '') else 'none'}"
        for label, value in pairs
    )
