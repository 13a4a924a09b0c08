"""Words out of tool definitions and queries: split, folded, stemmed.

Tool names come in every case style (``send_email``, ``createIssue``, ``k8s-get-pod-logs``,
``calendar.create_event``): each is split into its words. Text is NFKC-normalized and
case-folded, and English words are reduced to their Snowball stem (``invoices`` and
``invoice``, ``scheduled`` and ``schedule`` meet), memoized, since a catalog and its
queries repeat a small vocabulary.

A query also carries values a tool would take as arguments rather than words that
say which tool (``WEB-482``, ``dana@acme.com``, ``src/app.py``, ``'pay rent'``, a
person's name): ``query_words`` sets those apart, so that they neither match a tool by
accident nor count as words no tool knows.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "STOPWORDS",
    "QueryWord",
    "identifier_words",
    "query_words",
    "stem",
    "stemmer",
    "words",
]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2,})")
_WORD = re.compile(r"[^\W_]+")
_QUOTED = re.compile(r"""(?:^|(?<=\s))(['"‘“«「])(.+?)(['"’”»」])(?=\s|[.,;:!?]|$)""")  # noqa: RUF001
_LATIN_SPACES = re.compile(r"\s+")


def _set(text: str) -> frozenset[str]:
    """The words of ``text``, whitespace apart."""
    return frozenset(text.split())


STOPWORDS = _set(
    """
    a about above after again all also am an and any are as at be been before being
    below between both but by can could did do does doing done down during each few for
    from further had has have having he her here hers herself him himself his how i if
    in into is it its itself just let me might mine more most must my myself no nor not
    now of off on once only or other our ours ourselves out over own please same shall
    she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves via per us ok
    okay hey hi thanks thank could'd i'm i'd i'll i've it's that's what's there's let's
    don't doesn't didn't can't won't isn't aren't wasn't want wanna need needs like
    kindly quickly also really just maybe actually right something anything everything
    someone somebody anyone thing things stuff way tell know go going gonna us one two
    three four five six seven eight nine ten got much many long come coming back say
    said saying take takes keep keeps ll re ve s d t m also again yet still even able
    sure don doesn didn isn aren wasn weren won wouldn shouldn couldn haven hasn hadn
    mustn
    """
)
"""English words that say nothing about which tool (folded, before stemming)."""


TIME_WORDS = _set(
    """
    today tomorrow yesterday tonight morning afternoon evening night noon midnight day
    days week weeks weekend month months year years hour hours minute minutes next last
    ago since until later soon now daily weekly monthly yearly quarter monday tuesday
    wednesday thursday friday saturday sunday january february march april june july
    august september october november december
    """
)
"""Words that say when: arguments of a tool, not words about which tool."""

ASIDE = _set(
    """
    to from for about in on at with of by into onto over under via through since until
    after before during that saying because but like than per off and
    """
)
"""Words after which a query goes on with what the tool is given (``QueryWord.aside``)."""

_DETERMINERS = _set("a an my our your his her their this these")

QUESTIONS = _set(
    """
    what which who whom whose when where why how is are was were did does do any
    """
)
"""A query that begins with one of these asks to read, not to change anything."""


def fold(text: str) -> str:
    """NFKC and case-folded: full-width letters, ligatures and case made one."""
    return unicodedata.normalize("NFKC", text).casefold()


def strip_accents(word: str) -> str:
    """``réunion`` as ``reunion``: for matching words typed with or without accents."""
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def stemmer(language: str) -> Any:
    """The Snowball stemmer of ``language`` (``snowballstemmer``, C-accelerated when
    PyStemmer is installed); ImportError naming the extra when it is missing."""
    try:
        import snowballstemmer  # noqa: PLC0415 (the search extra, loaded on first use)
    except ImportError:
        raise ImportError(
            "tool search needs the snowballstemmer package: pip install 'snodo[search]'"
        ) from None
    return snowballstemmer.stemmer(language)


@lru_cache(maxsize=1)
def _english() -> Any:
    return stemmer("english")


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """The English stem of a folded word."""
    stemmed: str = _english().stemWord(word)
    return stemmed


def identifier_words(name: str) -> list[str]:
    """The words of a tool or parameter name, folded: ``createIssue`` -> create, issue;
    ``k8s-get-pod-logs`` -> k8s, get, pod, logs; ``calendar.create_event`` -> calendar,
    create, event."""
    spaced = _CAMEL.sub(" ", name)
    return [fold(part) for part in _WORD.findall(spaced.replace("_", " "))]


def words(text: str) -> list[str]:
    """The folded words of prose (camelCase inside it split too), stopwords kept."""
    return [fold(part) for part in _WORD.findall(_CAMEL.sub(" ", text).replace("_", " "))]


@dataclass(frozen=True, slots=True)
class QueryWord:
    """One word of a query, folded, and whether it is a value rather than a word
    about the tool (``value``), and whether it began with a capital mid-sentence
    (``proper``: a name, when no tool knows the word)."""

    text: str
    value: bool = False
    proper: bool = False
    kind: str = ""
    """The kind of value (``value_kind``), for the first word of a value token."""
    aside: bool = False
    """After a preposition, ``that`` or a colon: words there are mostly what the tool
    is given (a recipient, a topic, a place) rather than what it is."""
    brand: bool = False
    """A capitalized word after an article or possessive (``a Zoom call``, ``my Amazon
    order``): the name of a product or service, not of a person."""


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.IGNORECASE)
_URL = re.compile(r"^(?:https?|ftp)://|^www\.", re.IGNORECASE)
_FILE = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,6}$")
_KEY = re.compile(r"^[A-Z][A-Z0-9]+-\d+$")
_MONEY = re.compile(r"^[$€£¥]\d|^\d[\d,.]*(?:k|m|bn|usd|eur|gbp|[$€£¥])$", re.IGNORECASE)
_TIME = re.compile(
    r"^\d{1,2}(?::\d{2})?(?:am|pm)$|^\d{1,2}:\d{2}$|^\d{4}-\d{2}-\d{2}", re.IGNORECASE
)
_CAMEL_WORD = re.compile(r"^[a-z]+[A-Z][A-Za-z]*$")
_EXTENSIONS = {
    "archive": ("zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar"),
    "spreadsheet": ("csv", "xlsx", "xls", "tsv", "parquet"),
    "pdf": ("pdf",),
    "image": ("png", "jpg", "jpeg", "gif", "svg", "webp"),
    "document": ("doc", "docx", "odt", "md", "txt", "rtf"),
    "source": ("py", "js", "ts", "go", "rs", "java", "rb", "c", "h", "cpp", "cs", "kt", "sql"),
    "config": ("yaml", "yml", "json", "toml", "ini", "cfg", "env"),
}
"""File extensions by what a file of that kind is: a hint of the tool that takes it."""
_KIND_OF_EXTENSION = {ext: kind for kind, exts in _EXTENSIONS.items() for ext in exts}


def value_kind(token: str) -> str | None:
    """What kind of argument a query token is (``url``, ``email``, ``file``, ``path``,
    ``channel``, ``handle``, ``key``, ``code``, ``money``, ``time``, ``number``, ``value``),
    or None for a word: a token with a digit, or an address, path, handle, key or file
    name (``@``, ``/``, ``#``, ``_``, ``:`` or a dot between letters)."""
    core = token.strip(".,;:!?()[]{}\"'")
    if not core:
        return None
    if _URL.search(core):
        return "url"
    if _EMAIL.match(core):
        return "email"
    if core.startswith("#"):
        return "channel"
    if core.startswith("@"):
        return "handle"
    if _KEY.match(core):
        return "key"
    if _TIME.match(core):
        return "time"
    if _MONEY.match(core):
        return "money"
    if _CAMEL_WORD.match(core):
        return "code"
    if (
        "/" in core
        or "\\" in core
        or ("." in core.strip(".") and _FILE.search(core) and not core.replace(".", "").isdigit())
    ):
        found = _FILE.search(core)
        if found is None:
            return "path"
        return _KIND_OF_EXTENSION.get(found.group()[1:].casefold(), "file")
    if any(c.isdigit() for c in core):
        return "number"
    if any(c in core for c in "@#_:=$%~<>|{}[]"):
        return "value"
    return None


def query_words(query: str) -> Iterator[QueryWord]:
    """The words of a query in order, values marked: quoted text, tokens that are
    arguments (``_is_value``), and each word of them."""
    text = query.strip()
    spans: list[tuple[str, bool]] = []
    last = 0
    for match in _QUOTED.finditer(text):
        spans.append((text[last : match.start()], False))
        spans.append((match.group(2), True))
        last = match.end()
    spans.append((text[last:], False))
    first = True
    aside = False
    previous = ""
    for span, quoted in spans:
        for token in _LATIN_SPACES.split(span):
            if not token:
                continue
            kind = "quoted" if quoted else value_kind(token)
            value = kind is not None
            for part in _WORD.findall(_CAMEL.sub(" ", token).replace("_", " ")):
                proper = not first and part[:1].isupper() and part[1:2].islower()
                folded = fold(part)
                if not value and folded in TIME_WORDS:
                    yield QueryWord(folded, value=True, kind="time", aside=aside)
                    first = False
                    continue
                brand = proper and previous in _DETERMINERS
                yield QueryWord(
                    folded,
                    value=value,
                    proper=proper,
                    kind=kind or "",
                    aside=aside,
                    brand=brand,
                )
                previous = folded
                if folded in ASIDE:
                    aside = True
                kind = None  # the token's kind goes with its first word alone
                first = False
            if token.rstrip().endswith((".", "!", "?", ":")):
                first = True  # a new sentence: its capital says nothing
            if token.rstrip().endswith(":"):
                aside = True
