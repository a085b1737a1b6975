// The tickets access pattern at the root (merged from eight shards), newest first, loaded from
// its end backward as a chat loads its latest messages (last/before).
import { graphql } from "relay-runtime";

export const query = graphql`
  query TicketsQuery($last: Int, $before: String, $first: Int, $after: String) {
    ...Tickets_query
      @arguments(last: $last, before: $before, first: $first, after: $after)
  }
`;

export const tickets = graphql`
  fragment Tickets_query on Query
  @refetchable(queryName: "TicketsPaginationQuery")
  @argumentDefinitions(
    first: { type: "Int" }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  ) {
    tickets(status: OPEN, first: $first, after: $after, last: $last, before: $before)
      @connection(key: "Tickets_tickets", filters: ["status"]) {
      edges {
        node {
          id
          title
          createdAt
        }
      }
    }
  }
`;
