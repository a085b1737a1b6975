// Runs the graphql-http server audits (GraphQL over HTTP conformance) against the URL given as
// the first argument and prints one JSON array: [{id, name, status, reason}], where status is
// ok, error (a failed MUST), warn (a failed SHOULD) or notice (a failed MAY).
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs http://127.0.0.1:PORT/graphql');
  process.exit(2);
}
const results = await Promise.all(serverAudits({ url }).map((audit) => audit.fn()));
const summary = results.map(({ id, name, status, reason }) => ({ id, name, status, reason }));
process.stdout.write(JSON.stringify(summary) + '\n');
