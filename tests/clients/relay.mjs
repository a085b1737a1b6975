// relay-runtime in Node, as usePaginationFragment runs it (react-relay's useLoadMoreFunction):
// the artifacts relay-compiler made from relay/*.js, an Environment over the Edgewise URL, the
// connection paged with the pagination query relay-compiler generated, merged by Relay's
// ConnectionHandler, read back from the store.
//
// node relay.mjs <graphql URL> <artifact directory> <group id>
// Prints {forward: {pages, names, ...}, backward: {...}, tickets: {...}} as JSON.
import { createRequire } from "node:module";
import path from "node:path";
import {
  Environment,
  Network,
  RecordSource,
  Store,
  createOperationDescriptor,
  fetchQuery,
  getPaginationMetadata,
  getPaginationVariables,
  getSelector,
} from "relay-runtime";

const [url, artifacts, groupId] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const artifact = (name) => require(path.join(artifacts, `${name}.graphql.js`));

function environment(requests) {
  const network = Network.create(async (operation, variables) => {
    requests.push({ name: operation.name, variables });
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: operation.text, variables }),
    });
    return await response.json();
  });
  return new Environment({ network, store: new Store(new RecordSource()) });
}

// Page one connection to its end in `direction`, `count` edges a request, starting from the
// query's own first page; returns every request's variables and what the store holds after
// each one.
async function page({ query, fragment, variables, ref, direction, count }) {
  const requests = [];
  const env = environment(requests);
  const request = artifact(query);
  const operation = createOperationDescriptor(request, variables);
  env.retain(operation);
  await fetchQuery(env, request, variables).toPromise();
  const node = artifact(fragment);
  const { connectionPathInFragmentData, paginationRequest, paginationMetadata, identifierField } =
    getPaginationMetadata(node, "relay.mjs");
  const fragmentRef = ref(env.lookup(operation.fragment).data);
  const selector = getSelector(node, fragmentRef);
  const read = () => {
    let data = env.lookup(selector).data;
    for (const key of connectionPathInFragmentData) data = data[key];
    return data;
  };
  const seen = [];
  for (;;) {
    const connection = read();
    const info = connection.pageInfo;
    seen.push({
      names: connection.edges.map((e) => e.node.name ?? e.node.title),
      hasNextPage: info.hasNextPage,
      hasPreviousPage: info.hasPreviousPage,
      totalCount: connection.totalCount ?? null,
    });
    const more = direction === "forward" ? info.hasNextPage : info.hasPreviousPage;
    if (!more || seen.length > 60) break;
    const cursor = direction === "forward" ? info.endCursor : info.startCursor;
    const base = { ...selector.variables };
    if (identifierField) base.id = env.lookup(selector).data[identifierField];
    const next = getPaginationVariables(direction, count, cursor, base, {}, paginationMetadata);
    await fetchQuery(env, paginationRequest, next).toPromise();
  }
  return { requests, seen };
}

const group = (data) => data.group;
const root = (data) => data;
const report = {
  forward: await page({
    query: "GroupMembersQuery",
    fragment: "GroupMembers_group",
    variables: { id: groupId, first: 10 },
    ref: group,
    direction: "forward",
    count: 10,
  }),
  backward: await page({
    query: "GroupMembersQuery",
    fragment: "GroupMembers_group",
    variables: { id: groupId, last: 10 },
    ref: group,
    direction: "backward",
    count: 10,
  }),
  tickets: await page({
    query: "TicketsQuery",
    fragment: "Tickets_query",
    variables: { last: 7 },
    ref: root,
    direction: "backward",
    count: 7,
  }),
};
process.stdout.write(JSON.stringify(report));
