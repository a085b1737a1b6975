"""GraphQL types."""

from .base import Node
from .nodes import NODE_CLASSES, Group, Organization, Product, Ticket, User

__all__ = ["NODE_CLASSES", "Group", "Node", "Organization", "Product", "Ticket", "User"]
