// Relay fragments as an app writes them, compiled by relay-compiler (test_relay.py) against the
// committed schema.graphql: connections paged both ways, refetchable through node(id:).
import { graphql } from "relay-runtime";

export const query = graphql`
  query GroupMembersQuery($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    group(id: $id) {
      name
      ...GroupMembers_group
        @arguments(first: $first, after: $after, last: $last, before: $before)
    }
  }
`;

export const members = graphql`
  fragment GroupMembers_group on Group
  @refetchable(queryName: "GroupMembersPaginationQuery")
  @argumentDefinitions(
    first: { type: "Int" }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  ) {
    members(first: $first, after: $after, last: $last, before: $before)
      @connection(key: "GroupMembers_members") {
      totalCount
      edges {
        role
        node {
          id
          name
        }
      }
    }
  }
`;
