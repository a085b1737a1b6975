// urql against the served API (the URL of /graphql is the first argument): a query through the
// persisted-queries exchange (hashed, by GET), then a mutation, then the query again. Prints one
// JSON object: the results and every HTTP request sent ({method, query, hash}).
import { Client, cacheExchange, fetchExchange, gql } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';

const url = process.argv[2];
if (!url) {
  console.error('usage: node urql.mjs http://127.0.0.1:PORT/graphql');
  process.exit(2);
}

const sent = [];
async function recordingFetch(input, init = {}) {
  const method = init.method ?? 'GET';
  const params =
    method === 'GET' ? Object.fromEntries(new URL(String(input)).searchParams) : JSON.parse(init.body);
  const extensions =
    typeof params.extensions === 'string' ? JSON.parse(params.extensions) : params.extensions;
  sent.push({
    method,
    query: params.query ?? null,
    hash: extensions?.persistedQuery?.sha256Hash ?? null,
  });
  return fetch(input, init);
}

const client = new Client({
  url,
  fetch: recordingFetch,
  exchanges: [cacheExchange, persistedExchange({ preferGetForPersistedQueries: true }), fetchExchange],
});

const PRODUCT = gql`
  query Product($id: ID!) {
    product(id: $id) { id name subscribers { totalCount edges { plan node { id } } } }
  }
`;
const CREATE = gql`
  mutation Create($name: String!) {
    createProduct(input: { id: "urql-product", name: $name }) { id name version }
  }
`;

const show = (result) => ({ data: result.data ?? null, error: result.error?.message ?? null });
const report = {};
report.query = show(await client.query(PRODUCT, { id: 'prod2' }).toPromise());
report.queryRequests = sent.slice();
const before = sent.length;
report.mutation = show(await client.mutation(CREATE, { name: 'Made by urql' }).toPromise());
report.mutationRequests = sent.slice(before);
const created = await client
  .query(PRODUCT, { id: 'urql-product' }, { requestPolicy: 'network-only' })
  .toPromise();
report.created = show(created);
process.stdout.write(JSON.stringify(report) + '\n');
