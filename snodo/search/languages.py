"""Queries in French, German, Spanish, Russian and Japanese, put into tool words.

No model: a lexicon of the vocabulary tools use (``snodo.search.lexicon``: verbs such
as create, send, cancel, deploy; objects such as file, invoice, meeting, database; and
time words), by language. A query's language is told from its script (Cyrillic,
kana and kanji) or, in Latin script, from its function words and accents. Its words are
matched against the lexicon longest phrase first, by their Snowball stems in that
language (so that ``factures impayées`` and ``facture`` meet), German compounds split
into known parts, and Japanese, which has no spaces, matched longest entry first along
the text. What the lexicon does not know passes on as it is: many queries name their
tools' English terms (``namespace``, ``Slack``, ``CRM``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import import_module
from typing import Any

from snodo.search.text import (
    STOPWORDS,
    TIME_WORDS,
    QueryWord,
    fold,
    query_words,
    stemmer,
    strip_accents,
)

__all__ = ["LANGUAGES", "Word", "detect", "english_words"]

LANGUAGES = ("fr", "de", "es", "ru", "ja")
"""The languages a query may be in besides English."""

_SNOWBALL = {"fr": "french", "de": "german", "es": "spanish", "ru": "russian"}
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f々ー]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_ACCENTS = {"fr": "éèêàçùâîôœë", "de": "äöüß", "es": "ñáíóú¿¡"}
TRANSLATED = 0.9
"""The weight of a word the lexicon gave, the query's own English word being 1."""


@dataclass(frozen=True, slots=True)
class Word:
    """A word of the query in English: its own, or the lexicon's for one it had."""

    text: str
    weight: float = 1.0
    value: bool = False
    proper: bool = False
    foreign: bool = False
    """A word of a foreign query the lexicon did not know (kept as it is)."""
    kind: str = ""
    """What kind of value it is (``snodo.search.text.value_kind``)."""
    aside: bool = False
    """Said after a preposition (``snodo.search.text.QueryWord.aside``)."""
    brand: bool = False
    """A product's or service's name (``snodo.search.text.QueryWord.brand``)."""


@dataclass(frozen=True, slots=True)
class _Lexicon:
    phrases: dict[tuple[str, ...], tuple[str, ...]]
    """A phrase as its words' stems, and the English words it means."""
    longest: int
    stopwords: frozenset[str]
    """Folded, accents stripped."""
    parts: dict[str, tuple[str, ...]]
    """Single-word stems of at least four letters: for German compounds."""


def _key(language: str, word: str) -> str:
    """A word as the lexicon keys it: folded, its stem in ``language``, accents stripped."""
    folded = fold(word)
    name = _SNOWBALL.get(language)
    stemmed = _stemmer(name).stemWord(folded) if name else folded
    return strip_accents(stemmed)


@lru_cache(maxsize=8)
def _stemmer(name: str) -> Any:
    return stemmer(name)


def _split(language: str, text: str) -> list[str]:
    """A lexicon form's words, as ``query_words`` splits a query's."""
    return [word.text for word in query_words(text)]


@lru_cache(maxsize=len(LANGUAGES))
def lexicon(language: str) -> _Lexicon:
    """The lexicon of ``language`` (one of ``LANGUAGES``), read once."""
    module = import_module(f"snodo.search.lexicon.{language}")
    phrases: dict[tuple[str, ...], tuple[str, ...]] = {}
    for line in module.WORDS.strip().splitlines():
        forms, _, english = line.partition("=")
        meaning = tuple(english.split())
        for form in forms.split(","):
            if language == "ja":
                key: tuple[str, ...] = (form.strip(),)
            else:
                key = tuple(_key(language, piece) for piece in _split(language, form))
            if key and key[0]:
                known = phrases.get(key, ())
                phrases[key] = known + tuple(w for w in meaning if w not in known)
    plain = (lambda word: word) if language == "ja" else (lambda word: strip_accents(fold(word)))
    stops = frozenset(plain(word) for word in module.STOPWORDS.split())
    parts = {key[0]: meaning for key, meaning in phrases.items() if len(key) == 1}
    parts = {key: meaning for key, meaning in parts.items() if len(key) >= 4}
    longest = max(len(key[0]) if language == "ja" else len(key) for key in phrases)
    return _Lexicon(phrases, longest, stops, parts)


def detect(query: str) -> str:
    """The language of a query: ``en`` or one of ``LANGUAGES``."""
    if _JAPANESE.search(query):
        return "ja"
    if len(_CYRILLIC.findall(query)) >= 2:
        return "ru"
    folded = fold(query)
    tokens = re.findall(r"[^\W\d_]+", folded)
    if not tokens:
        return "en"
    scores = {"en": sum(1.0 for t in tokens if t in STOPWORDS)}
    for language in ("fr", "de", "es"):
        known = lexicon(language)
        score = 0.0
        for token in tokens:
            plain = strip_accents(token)
            if plain in known.stopwords and token not in STOPWORDS:
                score += 1.0
            elif (_key(language, token),) in known.phrases and token not in STOPWORDS:
                score += 0.5
        score += sum(0.75 for c in folded if c in _ACCENTS[language])
        scores[language] = score
    best = max(scores, key=lambda language: scores[language])
    return best if scores[best] > scores["en"] else "en"


def _meant(english: str) -> Word:
    """A word the lexicon gave: a time word is a value, as in an English query."""
    if english in TIME_WORDS:
        return Word(english, TRANSLATED, value=True, kind="time")
    return Word(english, TRANSLATED)


def english_words(query: str, language: str | None = None) -> list[Word]:
    """The query's words for an English-speaking index: its own when it is English,
    else what the lexicon of its language makes of them (``detect`` when not given)."""
    language = language or detect(query)
    if language == "en":
        return [
            Word(w.text, value=w.value, proper=w.proper, kind=w.kind, aside=w.aside, brand=w.brand)
            for w in query_words(query)
        ]
    if language == "ja":
        return _japanese(query)
    return _translated(language, list(query_words(query)))


def _translated(language: str, found: list[QueryWord]) -> list[Word]:
    known = lexicon(language)
    out: list[Word] = []
    index = 0
    keys = [_key(language, w.text) if not w.value else "" for w in found]
    while index < len(found):
        word = found[index]
        if word.value:
            out.append(Word(word.text, value=True, kind=word.kind))
            index += 1
            continue
        matched = 0
        for size in range(min(known.longest, len(found) - index), 0, -1):
            span = found[index : index + size]
            if any(w.value for w in span):
                continue
            meaning = known.phrases.get(tuple(keys[index : index + size]))
            if meaning is not None:
                out += [_meant(english) for english in meaning]
                matched = size
                break
        if matched:
            index += matched
            continue
        plain = strip_accents(word.text)
        if plain in known.stopwords:
            index += 1
            continue
        parts = _compound(known, keys[index]) if language == "de" else None
        if parts:
            out += [_meant(english) for english in parts]
        else:
            out.append(Word(word.text, proper=word.proper, foreign=True))
        index += 1
    return out


def _compound(known: _Lexicon, key: str) -> tuple[str, ...] | None:
    """A German compound as the meanings of its two known parts (``Urlaubsantrag``:
    Urlaub + Antrag), with the linking s allowed; None unless both parts are known."""
    for cut in range(len(key) - 4, 3, -1):
        head, tail = key[:cut], key[cut:]
        for first in (head, head[:-1] if head.endswith("s") else None):
            if first and first in known.parts:
                rest = known.parts.get(tail) or known.parts.get(_stem_again(tail))
                if rest is not None:
                    return known.parts[first] + rest
    return None


def _stem_again(part: str) -> str:
    return strip_accents(str(_stemmer("german").stemWord(part)))


def _japanese(query: str) -> list[Word]:
    known = lexicon("ja")
    out: list[Word] = []
    position = 0
    text = query
    while position < len(text):
        char = text[position]
        if not _JAPANESE.match(char):
            end = position
            while end < len(text) and not _JAPANESE.match(text[end]):
                end += 1
            for word in query_words(text[position:end]):
                meaning = known.phrases.get((word.text.upper(),)) or known.phrases.get((word.text,))
                if meaning is not None and not word.value:
                    out += [_meant(english) for english in meaning]
                else:
                    out.append(
                        Word(word.text, value=word.value, proper=word.proper, kind=word.kind)
                    )
            position = end
            continue
        for size in range(min(known.longest, len(text) - position), 0, -1):
            piece = text[position : position + size]
            meaning = known.phrases.get((piece,))
            if meaning is not None:
                out += [_meant(english) for english in meaning]
                position += size
                break
            if piece in known.stopwords:
                position += size
                break
        else:
            end = position + 1  # an unknown run: one word no tool knows
            while (
                end < len(text)
                and _JAPANESE.match(text[end])
                and not _starts_known(known, text, end)
            ):
                end += 1
            out.append(Word(text[position:end], foreign=True))
            position = end
    return out


def _starts_known(known: _Lexicon, text: str, at: int) -> bool:
    for size in range(min(known.longest, len(text) - at), 0, -1):
        piece = text[at : at + size]
        if (piece,) in known.phrases or piece in known.stopwords:
            return True
    return False


def words_of(items: Iterable[Word]) -> list[str]:
    """The texts of ``items``: for tests and the benchmark's report."""
    return [item.text for item in items]
