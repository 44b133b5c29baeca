"""What the commands print: JSON for scripts, plain aligned text for people."""

import json

import click

_WIDEST = 60  # a cell longer than this is cut (tables only; --json has everything)


def emit(as_json: bool, data, text) -> None:
    """`data` as JSON with --json, else the text `text()` makes of it."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text())


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


def fields_table(record: dict, keys: tuple[str, ...]) -> str:
    """One record as "key: value" lines."""
    width = max(len(key) for key in keys)
    return "\n".join(f"{key.ljust(width)}  {_cell(record.get(key))}" for key in keys)
