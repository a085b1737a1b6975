// A user's groups, forward only (first/after), as most lists page.
import { graphql } from "relay-runtime";

export const groups = graphql`
  fragment UserGroups_user on User
  @refetchable(queryName: "UserGroupsPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 10 }, cursor: { type: "String" }) {
    groups(first: $count, after: $cursor) @connection(key: "UserGroups_groups") {
      edges {
        since
        node {
          id
          name
        }
      }
    }
  }
`;
