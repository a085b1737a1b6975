"""Live queries: subscriptions answered again whenever what they read changes, and the relay of a
table's stream over Redis."""
