"""What a handler asks the client with, mid-call: elicitation forms and URLs, sampling,
roots, and the form schemas (``form_schema``) and typed forms (``typed_forms``) they
are built from.

Each module builds the input requests of one kind and reads the answers to them
(through ``snodo.core.input_responses``); the server's ``Ask`` parameters use them too.
This package may import the core only.
"""

from snodo.asking import elicitation, roots, sampling
from snodo.asking.roots import Root

__all__ = ["Root", "elicitation", "roots", "sampling"]
