"""Writes through a model: items built and sent in transactions, deletes, idempotency records, and
the replicas kept exact on every write."""
