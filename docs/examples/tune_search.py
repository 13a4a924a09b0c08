"""Where "nothing fits" begins, for your own tools: queries they serve and queries they
do not, and what each threshold answers.
python tune_search.py
"""

from large_catalog import server

from snodo.search import Lexical

SERVED = {  # what people ask, and the tool that serves it
    "send Bo the slides by mail": "send_email",
    "bill customer 42 for the setup work": "create_invoice",
    "the web pods are stuck, restart them": "restart_deployment",
    "will it rain in Oslo this weekend": "get_weather_forecast",
    "who am I signed in as": "whoami",
}
NOT_SERVED = [  # what people ask that no tool here does
    "send a fax to the county clerk",
    "restart my laptop",
    "create a Spotify playlist",
    "invoice me for the gym",
    "play some jazz",
]

tools = server.registry.definitions("tools")
for threshold in (0.2, 0.35, 0.5, 0.65):
    index = Lexical(min_coverage=threshold).index(tools)
    right = sum(
        [hit.name for hit in index.search(query, 1)] == [tool] for query, tool in SERVED.items()
    )
    quiet = sum(not index.search(query, 5) for query in NOT_SERVED)
    print(
        f"min_coverage {threshold}: {right} of {len(SERVED)} found first,"
        f" nothing for {quiet} of {len(NOT_SERVED)}"
    )
