"""The Starlette app: GraphQL over HTTP, WebSocket and Server-Sent Events, authentication, CORS,
limits, persisted queries and the playground."""
