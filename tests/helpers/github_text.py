"""What GitHub reads as mentions and references in a Markdown comment, by parsing it.

GitHub renders a comment's Markdown, then scans the text nodes of the page (character references
decoded) for mentions (``@name``, ``@org/team``: each notifies) and references (``#123``,
``org/repo#123``: each links and notes the comment in that issue's timeline) and URLs, ``www.``
names and e-mail addresses (autolinks), skipping text inside
``<pre>``, ``<code>`` and links. :func:`page_text` does the same with markdown-it-py and
:class:`html.parser.HTMLParser`; :data:`LINKED` is a superset of GitHub's patterns.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import NamedTuple

from markdown_it import MarkdownIt

#: A superset of what GitHub links: ``@`` then a name character, ``#`` or ``GH-`` then a digit, a
#: URL's ``://``, a bare ``www.``.
LINKED = re.compile(r"(?:^|\W)@[A-Za-z0-9]|#[0-9]|://|(?<![A-Za-z0-9])(?:www\.|GH-[0-9])", re.I)
#: Elements whose text GitHub does not scan for mentions or references.
_UNSCANNED = {"pre", "code", "a"}


class PageText(NamedTuple):
    """The text nodes of a rendered comment: those GitHub scans, and those it does not."""

    scanned: list[str]
    unscanned: list[str]


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.text = PageText([], [])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "hr", "img"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        (self.text.unscanned if _UNSCANNED & set(self.open) else self.text.scanned).append(data)


def page_text(markdown: str) -> PageText:
    """The text nodes of ``markdown`` rendered as CommonMark with tables and raw HTML."""
    parser = _Text()
    parser.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown))
    parser.close()
    return parser.text
