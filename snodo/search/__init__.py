"""Tool search: a server's tools found by a query instead of listed all at once.

``ToolSearch`` (``snodo.search.serving``) is given to a server, ``Server(tool_search=
ToolSearch())``, or to a gateway (``proxy(..., tool_search=...)``, a server with
``mount``ed members, ``snodo proxy --tool-search``). Its default engine, ``Lexical``
(``snodo.search.engine``), ranks tools by their names, titles, descriptions and
parameters with a paraphrase layer (``synonyms``) and a lexicon of tool words in
French, German, Spanish, Russian and Japanese (``languages``, ``lexicon``), and says
when nothing fits; it needs the ``snodo[search]`` extra (Snowball stemmers), no model.
``model.Hybrid`` blends that ranking with a multilingual sentence model shipped inside
its package (the ``snodo[search-model]`` extra). ``disclosure`` serves the same search
on the wire as SEP-2636's ``tools/catalog`` and ``tools/describe`` and SEP-1821's
``query`` on ``tools/list``.

The package may import the core and ``snodo.server``.
"""

from snodo.search.engine import Engine, Hit, Index, Lexical
from snodo.search.serving import ToolSearch

__all__ = ["Engine", "Hit", "Index", "Lexical", "ToolSearch"]
