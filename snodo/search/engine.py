"""Ranking tools for a query, and saying when none fits.

``Lexical`` is the default engine. A tool is indexed by fields, each with its weight:
its name split into words (the heaviest: a name says what a tool does), its title, the
first sentence of its description, the rest of it, its parameters' names, and their
descriptions and allowed values. Words are Snowball stems. A query is put into English
tool words first (``snodo.search.languages``), then each of its words and phrases
brings the words tools use for the same thing (``snodo.search.synonyms``), with less
weight than the word itself. Tools are scored with BM25F: per word, the weighted
counts of its fields, saturated, times how rare the word is in the catalog.

Whether anything fits is a second question. A query names what it wants in a few
words; a tool that fits knows most of them. Each word of the query weighs as much as
it is rare in the catalog, and a word no tool uses at all weighs as much as the rarest
(``order a pizza``: pizza is what matters, and no tool knows it); values (``WEB-482``,
a file name) and names of people weigh nothing. The best tool's share of that weight
is its *coverage*: below ``min_coverage``, or below ``min_score``, the search answers
nothing. Both were chosen on half of the benchmark's queries (``bench/tool_search.py``
reports the other half too); docs/large-catalogs.md says how to tune them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from snodo.search.languages import Word, english_words
from snodo.search.synonyms import expansions, families
from snodo.search.text import QUESTIONS, STOPWORDS, fold, identifier_words, stem, words

__all__ = ["Engine", "Hit", "Index", "Lexical", "document_fields"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Hit:
    """A tool found for a query, with its score (higher is better)."""

    name: str
    score: float


class Index(Protocol):
    """A catalog made searchable by an engine."""

    def search(
        self, query: str, limit: int, visible: Callable[[str], bool] | None = None
    ) -> list[Hit]:
        """The tools that fit ``query``, best first, at most ``limit``, only those
        ``visible`` allows; empty when none fits."""
        ...


class Engine(Protocol):
    """Makes an ``Index`` of tool definitions (as ``tools/list`` shows them)."""

    def index(self, tools: Sequence[Mapping[str, Any]]) -> Index:
        """An index of ``tools``, searched until the catalog changes."""
        ...


FIELDS = ("name", "title", "summary", "description", "parameters", "parameter_text")


def document_fields(tool: Mapping[str, Any]) -> dict[str, list[str]]:
    """A tool definition's words by field, folded (stemmed by the index)."""
    name = tool.get("name")
    description = tool.get("description")
    title = tool.get("title")
    sentences = _SENTENCE.split(description.strip(), 1) if isinstance(description, str) else []
    found: dict[str, list[str]] = {
        "name": identifier_words(name) if isinstance(name, str) else [],
        "title": words(title) if isinstance(title, str) else [],
        "summary": words(sentences[0]) if sentences else [],
        "description": words(sentences[1]) if len(sentences) > 1 else [],
        "parameters": [],
        "parameter_text": [],
    }
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(properties, Mapping):
        for parameter, spec in properties.items():
            if isinstance(parameter, str):
                found["parameters"] += identifier_words(parameter)
            if not isinstance(spec, Mapping):
                continue
            if isinstance(spec.get("description"), str):
                found["parameter_text"] += words(spec["description"])
            if isinstance(spec.get("title"), str):
                found["parameter_text"] += words(spec["title"])
            enum = spec.get("enum")
            if isinstance(enum, list):
                for value in enum:
                    if isinstance(value, str):
                        found["parameter_text"] += identifier_words(value)
    return found


@dataclass(frozen=True, slots=True)
class Lexical:
    """The default engine: no model, any language ``snodo.search.languages`` knows.

    ``weights``: of each field (``FIELDS``); ``k1`` and ``b``: BM25's saturation and
    length normalization; ``min_coverage`` and ``min_score``: below either, nothing
    fits (the module's docstring); ``unknown_weight``: how much a query word no tool
    knows weighs, as a share of the rarest word's weight; ``foreign_unknown``: the same
    for a word of a non-English query the lexicon did not know either.
    """

    weights: Mapping[str, float] = field(
        default_factory=lambda: {
            "name": 3.0,
            "title": 2.0,
            "summary": 1.5,
            "description": 0.8,
            "parameters": 0.6,
            "parameter_text": 0.35,
        }
    )
    k1: float = 1.2
    b: float = 0.3
    min_coverage: float = 0.35
    min_score: float = 0.65
    unknown_weight: float = 1.0
    foreign_unknown: float = 0.35
    aside_unknown: float = 0.4
    head_weight: float = 3.0

    def index(self, tools: Sequence[Mapping[str, Any]]) -> LexicalIndex:
        """The catalog's words and their weights, counted once."""
        return LexicalIndex(self, tools)


@dataclass(slots=True)
class _Slot:
    """One word (or phrase) of the query: the stems it stands for, each with its
    weight, and how much it weighs in coverage (0: a hint, or a function word)."""

    stems: dict[str, float]
    mass: float = 0.0
    family: str | None = None
    """The kind of action it names (``snodo.search.synonyms.FAMILIES``), if any."""
    scale: float = 1.0
    """How much it counts towards a tool's score (less when said aside)."""


_HINTS: dict[str, tuple[str, ...]] = {
    "url": ("url", "web", "link", "address"),
    "email": ("email", "address"),
    "file": ("file", "path"),
    "archive": ("archive", "zip", "file"),
    "spreadsheet": ("csv", "file"),
    "pdf": ("pdf", "file"),
    "image": ("image", "file"),
    "document": ("document", "file"),
    "config": ("file", "config"),
    "source": ("code", "file"),
    "path": ("path",),
    "channel": ("channel",),
    "handle": ("user",),
    "key": ("issue", "key"),
    "code": ("code",),
    "money": ("amount",),
    "time": ("time", "date"),
}
"""What a value in the query says of the tool that takes it (``QueryWord.kind``)."""
HINT_WEIGHT = 0.35
KEY_HINT = 0.6
"""An issue key (``WEB-123``) says more of its tool than other values do."""
ASIDE_WEIGHT = 0.75
"""How much a word said aside (``QueryWord.aside``) counts towards a tool's score."""
CONFLICT = 0.7
"""How much of its score a tool keeps when its name's action is of another family
than the query's (search for pages, and a tool that creates them)."""
RERANKED = 12


class LexicalIndex:
    """``Lexical``'s index of one catalog."""

    def __init__(self, engine: Lexical, tools: Sequence[Mapping[str, Any]]) -> None:
        self.engine = engine
        self.names: list[str] = []
        fields: list[dict[str, list[str]]] = []
        capitalized: set[str] = set()
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str):
                continue
            self.names.append(name)
            fields.append({key: _stems(value) for key, value in document_fields(tool).items()})
            for text in (tool.get("title"), tool.get("description")):
                if isinstance(text, str):
                    capitalized.update(fold(w) for w in _CAPITAL.findall(text))
        self.capitalized = frozenset(capitalized)
        """Words the catalog writes with a capital (Slack, GitHub): a query's capital
        on any other word known to the catalog marks a name (Mark, May)."""
        count = len(fields)
        average = {
            key: (sum(len(doc[key]) for doc in fields) / count if count else 0.0) or 1.0
            for key in FIELDS
        }
        weighted: dict[str, dict[int, float]] = {}
        family_of = families()
        self.known: list[frozenset[str]] = []
        self.actions: list[str | None] = []
        for position, doc in enumerate(fields):
            terms: dict[str, float] = {}
            for key in FIELDS:
                length_norm = 1.0 - engine.b + engine.b * len(doc[key]) / average[key]
                if key == "name":
                    length_norm = 1.0  # names are short: every word counts whole
                share = engine.weights.get(key, 0.0) / length_norm
                for term in doc[key]:
                    terms[term] = terms.get(term, 0.0) + share
            self.known.append(frozenset(terms))
            self.actions.append(next((family_of[w] for w in doc["name"] if w in family_of), None))
            for term, tf in terms.items():
                weighted.setdefault(term, {})[position] = tf
        self.idf = {
            term: math.log(1.0 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            for term, docs in weighted.items()
        }
        self.rarest = max(self.idf.values(), default=1.0)
        k1 = engine.k1
        self.postings: dict[str, list[tuple[int, float]]] = {
            term: [(doc, self.idf[term] * tf * (k1 + 1) / (k1 + tf)) for doc, tf in docs.items()]
            for term, docs in weighted.items()
        }

    def search(
        self, query: str, limit: int, visible: Callable[[str], bool] | None = None
    ) -> list[Hit]:
        ranked, slots = self.ranked(query, visible)
        if not ranked or not self._fits(ranked[0], slots):
            return []
        return [Hit(self.names[doc], round(score, 4)) for doc, score in ranked[:limit]]

    def ranked(
        self, query: str, visible: Callable[[str], bool] | None
    ) -> tuple[list[tuple[int, float]], list[_Slot]]:
        """Every tool with a score for ``query`` (by position), best first, and the
        query's slots (for ``coverage``); nothing decided yet about what fits."""
        slots = self._query(english_words(query))
        scores: dict[int, float] = {}
        for slot in slots:
            gains: dict[int, float] = {}
            for term, weight in slot.stems.items():
                for doc, gain in self.postings.get(term, ()):
                    if gains.get(doc, 0.0) < gain * weight:
                        gains[doc] = gain * weight
            for doc, gain in gains.items():
                scores[doc] = scores.get(doc, 0.0) + gain * slot.scale
        family = next((slot.family for slot in slots if slot.family is not None), None)
        if slots and slots[0].family == "question":
            family = "read"  # a question reads, whatever verb it goes on with
        if family is not None:
            for doc, score in scores.items():
                action = self.actions[doc]
                if action is not None and action != family:
                    scores[doc] = score * CONFLICT
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        if visible is not None:
            ranked = [(doc, score) for doc, score in ranked if visible(self.names[doc])]
        # Among the best, a tool that knows more of the query's words comes first.
        head = [
            (doc, score * (0.5 + 0.5 * self.coverage(doc, slots)))
            for doc, score in ranked[:RERANKED]
        ]
        head.sort(key=lambda item: (-item[1], item[0]))
        return head + ranked[RERANKED:], slots

    def explain(self, query: str) -> dict[str, Any]:
        """What the index made of a query: its slots, and the best tool's score and
        coverage (for tuning, and for the benchmark's report)."""
        ranked, slots = self.ranked(query, None)
        best = ranked[0] if ranked else None
        return {
            "slots": [(dict(s.stems), round(s.mass, 2), s.family) for s in slots],
            "best": None if best is None else self.names[best[0]],
            "score": 0.0 if best is None else round(best[1], 3),
            "coverage": 0.0 if best is None else round(self.coverage(best[0], slots), 3),
            "found": [hit.name for hit in self.search(query, 5)],
        }

    def _fits(self, best: tuple[int, float], slots: list[_Slot]) -> bool:
        engine = self.engine
        return best[1] >= engine.min_score * self.rarest and self.coverage(best[0], slots) >= (
            engine.min_coverage
        )

    def coverage(self, doc: int, slots: list[_Slot]) -> float:
        """The share of the query's weight that the tool at ``doc`` knows."""
        total = sum(slot.mass for slot in slots)
        if total <= 0.0:
            return 0.0
        known = self.known[doc]
        matched = 0.0
        for slot in slots:
            if slot.mass:
                matched += slot.mass * max(
                    (w for s, w in slot.stems.items() if s in known), default=0.0
                )
        return matched / total

    def _query(self, found: list[Word]) -> list[_Slot]:
        """The query's slots: each word with what it brings, its weight in coverage."""
        slots: list[_Slot] = []
        question = bool(found) and found[0].text in QUESTIONS
        if question:
            slots.append(_Slot({}, family="question"))
        for word in found:
            if word.value:
                hinted = _HINTS.get(word.kind, ())
                if hinted:
                    weight = KEY_HINT if word.kind == "key" else HINT_WEIGHT
                    slots.append(_Slot({stem(h): weight for h in hinted}))
        plain = [w for w in found if not w.value and not self._named(w)]
        plain = self._joined(plain)
        stems = [stem(w.text) for w in plain]
        head = None if question else _head(plain)
        brought: list[dict[str, float]] = [{} for _ in plain]
        phrased = [False] * len(plain)
        for start, end, adds in expansions(stems):
            for offset in range(start, end):
                target = brought[offset]
                for added, weight in adds.items():
                    if target.get(added, 0.0) < weight:
                        target[added] = weight
                if end - start > 1:
                    phrased[offset] = True
        idf = self.idf
        engine = self.engine
        family_of = families()
        previous: _Slot | None = None
        for position, (word, word_stem) in enumerate(zip(plain, stems, strict=True)):
            stop = word.text in STOPWORDS
            mine = {} if stop or phrased[position] else {word_stem: 1.0}
            every = {s: w for s, w in brought[position].items()}
            every.update(mine)
            if not every:
                continue
            if phrased[position] and previous is not None and previous.stems == every:
                continue  # the rest of a phrase: one slot for all its words
            known = [s for s in every if s in idf]
            if stop and not phrased[position]:
                mass = 0.0
            elif known:
                mass = max(idf[s] for s in known)
            elif word.foreign:
                mass = self.rarest * engine.foreign_unknown
            else:
                mass = self.rarest * engine.unknown_weight
                if word.aside:
                    mass *= engine.aside_unknown
            family = family_of.get(word_stem) if mine else None
            if phrased[position]:
                family = next((family_of[s] for s in every if s in family_of), None)
            if position == head:
                mass *= engine.head_weight
            scale = ASIDE_WEIGHT if word.aside else 1.0
            slot = _Slot({s: w * word.weight for s, w in every.items()}, mass, family, scale)
            slots.append(slot)
            previous = slot
        return slots

    def _named(self, word: Word) -> bool:
        """A capitalized word mid-sentence that the catalog knows only in lower case
        (or not at all): a name, a value, not a word about the tool. A product's or
        service's name (``Word.brand``) is a word about the tool: one the catalog does
        not know says the tool is not here."""
        return word.proper and not word.brand and word.text not in self.capitalized

    def _joined(self, found: list[Word]) -> list[Word]:
        """Two words the catalog writes as one (``pay slip``, ``time zone``, ``to do``)
        joined."""
        out: list[Word] = []
        index = 0
        while index < len(found):
            if index + 1 < len(found):
                first, second = found[index].text, found[index + 1].text
                joined = first + second
                if min(len(first), len(second)) >= 2 and stem(joined) in self.idf:
                    out.append(Word(joined, found[index].weight, aside=found[index].aside))
                    index += 2
                    continue
            out.append(found[index])
            index += 1
        return out


def _head(found: list[Word]) -> int | None:
    """Where the query's object is: its last word before anything said aside (``share
    the screenshot`` in #design, ``schedule a tweet`` for tomorrow), English only."""
    head = None
    for position, word in enumerate(found):
        if word.aside or word.foreign or word.weight != 1.0:
            break
        if word.text not in STOPWORDS:
            head = position
    return head


_CAPITAL = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][A-Za-z0-9]+")
"""A capitalized word not at the start of a sentence."""


def _stems(found: list[str]) -> list[str]:
    """Stems of a field's words; a ``sub`` word also counts as what it is under
    (subfolders: folders too)."""
    out: list[str] = []
    for word in found:
        out.append(stem(word))
        if word.startswith("sub") and len(word) > 6:
            out.append(stem(word[3:]))
    return out
