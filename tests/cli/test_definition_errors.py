"""A server written wrongly is one ``snodo:`` line naming the handler and the fix, from
``snodo run`` and from ``snodo list``/``call`` that start it (not 37 lines of traceback,
nor the last line printed twice)."""

from __future__ import annotations

import pytest

from tests.support.processes import snodo

CASES = {
    "asked_not_optional": (
        "greet: asked parameter 'name': the user may decline, so annotate it `T | None`"
    ),
    "unresolvable_dependency": (
        "count: dependency database: parameter 'url' is neither the Context nor a dependency:"
        " annotate it Annotated[T, Depends(fn)] or Context, or give it a default"
    ),
    "generator_lifespan": (
        "lifespan pool is a generator function: write it as `async def` and decorate it"
        " with @contextlib.asynccontextmanager"
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_line_naming_the_fix(case: str) -> None:
    target = f"tests/cli/broken/{case}.py:server"
    expected = f"snodo: tests/cli/broken/{case}.py: {CASES[case]}"
    for command in (["run", target], ["list", target], ["call", target, "anything"]):
        done = snodo(*command)
        assert done.returncode == 1
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(expected), done.stderr
