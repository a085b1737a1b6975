"""Edgewise server: GraphQL types and resolvers, the HTTP app, the CLI."""
