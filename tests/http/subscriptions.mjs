// Live queries through real clients over graphql-transport-ws (the URL of /graphql is the first
// argument, a bearer token the optional second): graphql-ws's own client, Apollo Client's
// GraphQLWsLink and urql's subscriptionExchange (both over graphql-ws), and over Server-Sent
// Events graphql-sse's client (distinct connections mode). Each subscribes to a
// user's name, renames the user with a mutation over HTTP once the first answer came, and waits
// for the second. Prints one JSON object: the answers each client saw.
import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { Client as UrqlClient, subscriptionExchange } from '@urql/core';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const url = process.argv[2];
const token = process.argv[3];
if (!url) {
  console.error('usage: node subscriptions.mjs http://127.0.0.1:PORT/graphql [TOKEN]');
  process.exit(2);
}

const NAME = 'subscription Name($id: ID!) { user(id: $id) { name } }';

function wsClient() {
  return createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
}

async function rename(id, name) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({
      query: 'mutation($id: ID!, $name: String!) { updateUser(input: {id: $id, name: $name}) { id } }',
      variables: { id, name },
    }),
  });
  const body = await response.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
}

// Subscribe with `start(onAnswer, onError)` (returning a stop function); rename after the first
// answer; resolve with two answers.
function twoAnswers(start, id, name) {
  return new Promise((resolve, reject) => {
    const seen = [];
    const timer = setTimeout(() => reject(new Error(`timed out after ${JSON.stringify(seen)}`)), 15000);
    const stop = start(
      (answer) => {
        seen.push(answer);
        if (seen.length === 1) rename(id, name).catch(reject);
        if (seen.length === 2) {
          clearTimeout(timer);
          setTimeout(() => stop(), 0);
          resolve(seen);
        }
      },
      (error) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(JSON.stringify(error)));
      },
    );
  });
}

const report = {};

const raw = wsClient();
report.graphqlWs = await twoAnswers(
  (next, error) =>
    raw.subscribe(
      { query: NAME, variables: { id: 'alice' } },
      { next: (value) => next(value), error, complete: () => {} },
    ),
  'alice',
  'Alice by graphql-ws',
);
await raw.dispose();

const apolloWs = wsClient();
const apollo = new ApolloClient({ link: new GraphQLWsLink(apolloWs), cache: new InMemoryCache() });
report.apollo = await twoAnswers(
  (next, error) => {
    const subscription = apollo
      .subscribe({ query: gql(NAME), variables: { id: 'bob' } })
      .subscribe({ next: (value) => next({ data: value.data }), error });
    return () => subscription.unsubscribe();
  },
  'bob',
  'Bob by Apollo',
);
await apolloWs.dispose();

const urqlWs = wsClient();
const urql = new UrqlClient({
  url,
  exchanges: [
    subscriptionExchange({
      forwardSubscription(request) {
        const input = { ...request, query: request.query || '' };
        return {
          subscribe(sink) {
            const unsubscribe = urqlWs.subscribe(input, sink);
            return { unsubscribe };
          },
        };
      },
    }),
  ],
});
report.urql = await twoAnswers(
  (next, error) => {
    const { unsubscribe } = urql.subscription(NAME, { id: 'alice' }).subscribe((result) => {
      if (result.error) error(result.error);
      else next({ data: result.data });
    });
    return unsubscribe;
  },
  'alice',
  'Alice by urql',
);
await urqlWs.dispose();

const sse = createSseClient({
  url,
  singleConnection: false,
  headers: token ? { authorization: `Bearer ${token}` } : {},
  retryAttempts: 0,
});
report.graphqlSse = await twoAnswers(
  (next, error) =>
    sse.subscribe(
      { query: NAME, variables: { id: 'bob' } },
      { next: (value) => next(value), error, complete: () => {} },
    ),
  'bob',
  'Bob by graphql-sse',
);
sse.dispose();

process.stdout.write(JSON.stringify(report) + '\n');
