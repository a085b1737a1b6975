"""The shipped models (``demo``, ``orders``, ``order-entry``): each a ``model.yaml``, its sample
data ``data.jsonl`` (DynamoDB JSON lines, as ``edgewise load`` reads) and any hooks."""
