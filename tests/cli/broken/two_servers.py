"""Two servers in one module: ``snodo run`` must be told which."""

import secrets

from snodo import Server

public = Server("public", "1.0.0", state_secret=secrets.token_bytes(32))
admin = Server("admin", "1.0.0", state_secret=secrets.token_bytes(32))
