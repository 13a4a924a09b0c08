"""The Server Card: the document's generated package (``snodo_wire_server_card``)."""

from snodo_wire_server_card import *  # noqa: F403
from snodo_wire_server_card.protocol import *  # noqa: F403
