// An Apollo supergraph of two subgraphs, for real: Edgewise (served with --federation) and a small
// "reviews" subgraph written here with @apollo/subgraph, composed by @apollo/gateway's
// IntrospectAndCompose (each subgraph's `_service { sdl }`) and served by @apollo/server. Each
// query is sent to the gateway; every request the gateway makes to Edgewise carries
// `Edgewise-Trace: 1`, and its query and DynamoDB cost are reported.
//
// node gateway.mjs <Edgewise graphql URL> <query JSON>...
// Prints {results: [...], edgewise: [{query, variables, dynamodb}], sdl} as JSON.
import { ApolloGateway, IntrospectAndCompose, RemoteGraphQLDataSource } from "@apollo/gateway";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginInlineTraceDisabled } from "@apollo/server/plugin/disabled";
import { startStandaloneServer } from "@apollo/server/standalone";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse } from "graphql";

const [edgewise, ...queries] = process.argv.slice(2);
// stdout holds the report alone
const logger = { debug() {}, info() {}, warn: console.error, error: console.error };

const REVIEWS = [
  { id: "r1", body: "Alice's groups are well run", author: "USER#alice" },
  { id: "r2", body: "Bob answers fast", author: "USER#bob" },
  { id: "r3", body: "Alice again", author: "USER#alice" },
  { id: "r4", body: "Nobody wrote this", author: "USER#ghost" },
];

const reviews = new ApolloServer({
  logger,
  plugins: [ApolloServerPluginInlineTraceDisabled()],
  schema: buildSubgraphSchema({
    typeDefs: parse(`
      extend schema
        @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])

      type Review @key(fields: "id") {
        id: ID!
        body: String!
        author: User
      }

      type User @key(fields: "id") {
        id: ID!
        reviews: [Review!]!
      }

      type Query {
        reviews: [Review!]!
      }
    `),
    resolvers: {
      Query: { reviews: () => REVIEWS },
      Review: {
        __resolveReference: ({ id }) => REVIEWS.find((r) => r.id === id),
        author: (review) => ({ __typename: "User", id: review.author }),
      },
      User: {
        __resolveReference: ({ id }) => ({ id }),
        reviews: ({ id }) => REVIEWS.filter((r) => r.author === id),
      },
    },
  }),
});
const { url: reviewsUrl } = await startStandaloneServer(reviews, { listen: { port: 0 } });

const seen = [];
class Traced extends RemoteGraphQLDataSource {
  willSendRequest({ request }) {
    if (this.url === edgewise) request.http.headers.set("edgewise-trace", "1");
  }
  didReceiveResponse({ request, response }) {
    if (this.url === edgewise) {
      seen.push({
        query: request.query,
        variables: request.variables ?? null,
        dynamodb: response.extensions?.dynamodb ?? null,
      });
    }
    return response;
  }
}

const gateway = new ApolloGateway({
  logger,
  supergraphSdl: new IntrospectAndCompose({
    subgraphs: [
      { name: "edgewise", url: edgewise },
      { name: "reviews", url: reviewsUrl },
    ],
  }),
  buildService: ({ url }) => new Traced({ url }),
});
const server = new ApolloServer({ gateway, logger });
const { url } = await startStandaloneServer(server, { listen: { port: 0 } });

const results = [];
for (const text of queries) {
  const { query, variables } = JSON.parse(text);
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  results.push(await response.json());
}
const edgewiseCalls = seen.filter((s) => !s.query.includes("_service"));
await server.stop();
await reviews.stop();
process.stdout.write(JSON.stringify({ results, edgewise: edgewiseCalls }));
