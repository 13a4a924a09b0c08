"""snodo.asking.roots: the roots/list request, response reading and path containment."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from snodo.asking import roots
from snodo.core.errors import InvalidParams
from snodo.core.result import MISSING, input_required
from snodo_wire import adapters
from snodo_wire.models import ListRootsResult, Root
from tests.support.mrtr import ctx

ANSWER = {
    "roots": [
        {"uri": "file:///home/user/repos/frontend", "name": "Frontend Repository"},
        {"uri": "file:///home/user/repos/backend", "name": "Backend Repository"},
    ]
}


def test_list_roots_is_a_bare_request_without_params() -> None:
    request = roots.list_roots()
    assert request == {"method": "roots/list"}
    adapters.input_request.validate_python(request, by_alias=True, by_name=False)
    assert input_required({"r": request}).to_result() == {
        "resultType": "input_required",
        "inputRequests": {"r": {"method": "roots/list"}},
    }


def test_missing_answer_is_missing() -> None:
    assert roots.response(ctx(), "r", roots.list_roots()) is MISSING
    assert roots.response(ctx(other=ANSWER), "r", roots.list_roots()) is MISSING


def test_answer_is_the_generated_model() -> None:
    result = roots.response(ctx(r=ANSWER), "r", roots.list_roots())
    assert isinstance(result, ListRootsResult)
    assert [(root.uri, root.name) for root in result.roots] == [
        ("file:///home/user/repos/frontend", "Frontend Repository"),
        ("file:///home/user/repos/backend", "Backend Repository"),
    ]
    assert result.model_dump(mode="json") == ANSWER
    empty = roots.response(ctx(r={"roots": []}), "r", roots.list_roots())
    assert isinstance(empty, ListRootsResult)
    assert empty.roots == []


SECRET = "file:///home/alice/secret-project"


@pytest.mark.parametrize(
    "answer",
    [
        None,
        [],
        {},
        {"roots": SECRET},
        {"roots": [SECRET]},
        {"roots": [{"name": SECRET}]},
        {"roots": [{"uri": 1}]},
        {"roots": [{"uri": SECRET}, {"uri": "https://example.com/secret"}]},
        {"roots": [{"uri": "/home/alice/secret"}]},
        {"roots": [{"uri": "FILE:///home/alice/secret"}]},
        {"roots": [{"uri": "file:/home/alice/secret"}]},
        {"roots": [{"uri": SECRET, "name": 3}]},
    ],
)
def test_malformed_answers_raise_invalid_params_without_echo(answer: Any) -> None:
    with pytest.raises(InvalidParams) as caught:
        roots.response(ctx(r=answer), "r", roots.list_roots())
    assert caught.value.message == "Invalid roots response for 'r'"
    assert caught.value.code == -32602
    assert "alice" not in str(caught.value.to_error())


def test_response_refuses_another_kind_of_request() -> None:
    with pytest.raises(ValueError, match="request"):
        roots.response(ctx(r=ANSWER), "r", {"method": "elicitation/create", "params": {}})


# --- root_path -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///", "/"),
        ("file:///a/b", "/a/b"),
        ("file:///a/b/", "/a/b"),
        ("file://localhost/a/b", "/a/b"),
        ("file:///a//b/./c/../d", "/a/b/d"),
        ("file:///../../a", "/a"),
        ("file:///a/My%20Docs/%E2%9C%93", "/a/My Docs/\u2713"),
        ("file:///a/%2e%2e/b", "/b"),
        ("file:///a/100%25", "/a/100%"),
        ("file:///a b", "/a b"),
    ],
)
def test_root_path(uri: str, path: str) -> None:
    assert roots.root_path(uri) == path


@pytest.mark.parametrize(
    "uri",
    [
        "https://example.com/a",
        "file:/a",
        "file://",
        "file://server/share",
        "file://example.com/a",
        "file:///a?x=1",
        "file:///a#frag",
        "file:///a/b%2Fc",
        "file:///a/%00",
        "file:///a/%FF",
        "file:///a\tb",
        "file:///a\nb",
    ],
)
def test_root_path_refuses(uri: str) -> None:
    with pytest.raises(ValueError):
        roots.root_path(uri)


# --- contains ------------------------------------------------------------------------

HOME = ["file:///home/user/repos/frontend", "file:///srv/My%20Data"]


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("/home/user/repos/frontend", True),
        ("/home/user/repos/frontend/", True),
        ("/home/user/repos/frontend/src/app.ts", True),
        ("/home/user/repos/frontend/./src/../README.md", True),
        ("/home/user/repos/frontendx", False),
        ("/home/user/repos/frontend-old/a", False),
        ("/home/user/repos", False),
        ("/home/user/repos/frontend/../backend/a", False),
        ("/home/user/repos/frontend/../../../../etc/passwd", False),
        ("//home/user/repos/frontend/a", True),
        ("/srv/My Data/x", True),
        ("/srv/My%20Data/x", False),  # a path is literal, not percent-decoded
        ("/srv/my data/x", False),  # case-sensitive
        ("/", False),
    ],
)
def test_contains(path: str, inside: bool) -> None:
    assert roots.contains(HOME, path) is inside


def test_contains_takes_every_root_form() -> None:
    result = ListRootsResult.model_validate(ANSWER)
    path = "/home/user/repos/backend/main.py"
    assert roots.contains(result, path)
    assert roots.contains(result.roots, PurePosixPath(path))
    assert roots.contains(ANSWER["roots"], path)
    assert roots.contains([Root(uri="file:///home/user/repos/backend")], path)
    assert not roots.contains([], path)
    assert roots.contains(["file:///"], "/anything/at/all")


def test_roots_that_are_not_local_file_uris_contain_nothing() -> None:
    remote = ["file://server/home/user", "https://example.com/home/user", "file:///a%2Fb"]
    assert not roots.contains(remote, "/home/user/x")
    assert not roots.contains(remote, "/a/b/c")
    assert roots.contains([*remote, "file:///home"], "/home/user/x")


@pytest.mark.parametrize("path", ["relative/path", "", "./a", "C:\\Users\\x", "/a\x00b"])
def test_contains_needs_an_absolute_path(path: str) -> None:
    with pytest.raises(ValueError):
        roots.contains(HOME, path)


@pytest.mark.parametrize("bad", ["file:///a", {"uri": "file:///a"}, [3], [{"name": "x"}]])
def test_contains_rejects_malformed_root_collections(bad: Any) -> None:
    with pytest.raises(TypeError):
        roots.contains(bad, "/a/b")


def test_symlinks_are_followed_only_on_request(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    root_uri = root.as_uri()
    escaped = os.path.join(root, "link", "secret.txt")
    assert roots.contains([root_uri], escaped)
    assert not roots.contains([root_uri], escaped, follow_symlinks=True)
    assert roots.contains([root_uri], os.path.join(root, "real.txt"), follow_symlinks=True)
