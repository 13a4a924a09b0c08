"""A ``SKILL.md``'s YAML frontmatter, parsed within bounds: by the server that scans its
skills and by the client that checks a file against its entry, alike.

YAML aliases make a small text stand for a huge value: nine lines of ``&a [*b, *b, ...]``
name a billion strings. The parser itself only shares references, so parsing is quick;
what takes minutes is whatever walks the value afterwards (checking it is JSON, copying
it, comparing it with an entry, sending it). So the text is capped
(``MAX_FRONTMATTER_BYTES``), its node graph is composed first, and its size as if every
alias were a copy of what it names (a node weighing one, a scalar one more per
character) is counted before anything is built from it: past
``MAX_EXPANDED_WEIGHT`` (or an alias that names its own ancestor, which never ends) it
is refused, whatever the loader. A nesting too deep for the parser is refused too.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MAX_EXPANDED_WEIGHT", "MAX_FRONTMATTER_BYTES", "load_bounded"]

MAX_FRONTMATTER_BYTES: Final = 64 * 1024
"""The frontmatter block's size in UTF-8. The Agent Skills fields are short (a name of
64 characters, a description of 1024); this leaves room for any metadata an author
writes by hand."""
MAX_EXPANDED_WEIGHT: Final = 2 * MAX_FRONTMATTER_BYTES
"""The frontmatter's weight with its aliases expanded: each node one, each scalar one
more per character. Twice the text cap: aliases may repeat, not multiply."""


def load_bounded(text: str, loader: Any) -> Any:
    """The one YAML document in ``text``, loaded with ``loader`` (a PyYAML loader class)
    once it is within both bounds; ValueError saying which bound or what YAML error."""
    import yaml  # noqa: PLC0415  (the skills extra, needed only when skills are read)

    if len(text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        raise ValueError(f"its frontmatter is longer than {MAX_FRONTMATTER_BYTES} bytes")
    parser = loader(text)
    try:
        node = parser.get_single_node()
        if node is None:
            return None
        _weigh(node)
        return parser.construct_document(node)
    except yaml.YAMLError as exc:
        raise ValueError(f"its frontmatter is not YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ValueError("its frontmatter nests too deeply") from None
    finally:
        parser.dispose()


def _weigh(root: Any) -> int:
    """The node graph's weight with every alias expanded; ValueError past the bound or
    on a cycle. Each node is weighed once (aliases share nodes), so this is linear in
    the graph however far it would expand."""
    import yaml  # noqa: PLC0415

    weights: dict[int, int] = {}
    open_: set[int] = set()

    def weigh(node: Any) -> int:
        key = id(node)
        known = weights.get(key)
        if known is not None:
            return known
        if key in open_:
            raise ValueError("its frontmatter has an alias inside what it names")
        open_.add(key)
        if isinstance(node, yaml.ScalarNode):
            total = 1 + len(node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(weigh(item) for item in node.value)
        else:  # a MappingNode: its keys count as much as its values
            total = 1 + sum(weigh(k) + weigh(v) for k, v in node.value)
        open_.discard(key)
        if total > MAX_EXPANDED_WEIGHT:
            raise ValueError(
                "its frontmatter's aliases expand it past "
                f"{MAX_EXPANDED_WEIGHT} (nodes and characters)"
            )
        weights[key] = total
        return total

    return weigh(root)
