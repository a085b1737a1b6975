// Apollo Client against the served API (the URL of /graphql is the first argument), as a browser
// app would use it: automatic persisted queries (hashed queries by GET), relay-style pagination
// with fetchMore, and cache normalization after a mutation. Prints one JSON object: what each
// step saw, and every HTTP request sent ({method, query, hash}).
import { createHash } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';

const url = process.argv[2];
if (!url) {
  console.error('usage: node apollo.mjs http://127.0.0.1:PORT/graphql');
  process.exit(2);
}

const sent = [];
async function recordingFetch(input, init = {}) {
  const method = init.method ?? 'GET';
  let params;
  if (method === 'GET') {
    const search = new URL(String(input)).searchParams;
    params = Object.fromEntries(search);
    if (params.extensions) params.extensions = JSON.parse(params.extensions);
  } else {
    params = JSON.parse(init.body);
  }
  sent.push({
    method,
    query: params.query ?? null,
    hash: params.extensions?.persistedQuery?.sha256Hash ?? null,
    key: new Headers(init.headers).get('idempotency-key'),
  });
  return fetch(input, init);
}

function client() {
  const persisted = new PersistedQueryLink({
    sha256: (text) => createHash('sha256').update(text).digest('hex'),
    useGETForHashedQueries: true,
  });
  return new ApolloClient({
    link: persisted.concat(new HttpLink({ uri: url, fetch: recordingFetch })),
    cache: new InMemoryCache({
      typePolicies: { User: { fields: { groups: relayStylePagination() } } },
    }),
  });
}

const GROUPS = gql`
  query AliceGroups($after: String) {
    user(id: "alice") {
      id
      name
      groups(first: 1, after: $after) {
        edges { cursor role node { id name } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
`;
const RENAME = gql`
  mutation Rename($id: ID!, $name: String!) {
    updateGroup(input: { id: $id, name: $name }) { id name version }
  }
`;

const groupsOf = (data) => ({
  names: data.user.groups.edges.map((edge) => edge.node.name),
  ids: data.user.groups.edges.map((edge) => edge.node.id),
  hasNextPage: data.user.groups.pageInfo.hasNextPage,
});
const report = {};

// 1. Persisted queries: the hash alone first (GET), then the retry with the query (POST).
const apollo = client();
const watched = apollo.watchQuery({ query: GROUPS });
const first = await new Promise((resolve, reject) => {
  const subscription = watched.subscribe({
    next: (result) => {
      if (result.data?.user) {
        subscription.unsubscribe();
        resolve(result);
      }
    },
    error: reject,
  });
});
report.firstPage = groupsOf(first.data);
report.persisted = sent.slice();

// 2. Pagination: fetchMore with the end cursor; relayStylePagination merges the pages.
const paged = sent.length;
await watched.fetchMore({ variables: { after: first.data.user.groups.pageInfo.endCursor } });
report.merged = groupsOf(apollo.readQuery({ query: GROUPS }));
report.fetchMoreRequests = sent.slice(paged);

// 3. Normalization: the mutation's answer updates the cached group everywhere, no refetch.
const before = sent.length;
const renamed = await apollo.mutate({
  mutation: RENAME,
  variables: { id: 'group1', name: 'Renamed by Apollo' },
});
report.mutation = renamed.data.updateGroup;
report.afterMutation = groupsOf(apollo.readQuery({ query: GROUPS }));
report.requestsForMutation = sent.slice(before);

// 4. A second client (an empty cache) finds the query's hash registered: one GET, no query.
const again = sent.length;
const fresh = await client().query({ query: GROUPS });
report.secondClient = groupsOf(fresh.data);
report.secondClientRequests = sent.slice(again);

// 5. Safe retries: the link of docs/frontend.md ("Safe retries") adds an Idempotency-Key to each
// mutation (the caller's own through the context, else a new one); the same key sent twice
// applies once.
const idempotency = new ApolloLink((operation, forward) => {
  const definition = getMainDefinition(operation.query);
  if (definition.kind === 'OperationDefinition' && definition.operation === 'mutation') {
    const key = operation.getContext().idempotencyKey ?? crypto.randomUUID();
    operation.setContext(({ headers = {} }) => ({
      headers: { ...headers, 'Idempotency-Key': key },
    }));
  }
  return forward(operation);
});
const keyed = new ApolloClient({
  link: ApolloLink.from([idempotency, new HttpLink({ uri: url, fetch: recordingFetch })]),
  cache: new InMemoryCache(),
});
const CREATE = gql`
  mutation Create($name: String!) {
    createUser(input: { name: $name }) { id name }
  }
`;
const keyedFrom = sent.length;
const create = (key) =>
  keyed.mutate({ mutation: CREATE, variables: { name: 'Keyed' }, context: { idempotencyKey: key } });
report.keyedFirst = (await create('apollo-1')).data.createUser;
report.keyedAgain = (await create('apollo-1')).data.createUser;
report.keyedOther = (await keyed.mutate({ mutation: CREATE, variables: { name: 'Other' } })).data
  .createUser;
report.keyedRequests = sent.slice(keyedFrom);

process.stdout.write(JSON.stringify(report) + '\n');
