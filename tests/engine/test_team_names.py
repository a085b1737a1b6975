"""A one-template key over a named placeholder (MODELS.md, "Items decide their type; stored
objects": `User: {key: "ACCOUNT#{username}"}`, `Organization: {key: "ACCOUNT#{name}"}`): root
lookups, mutations and edge arguments take the placeholder's value, `id` and `node(id:)` the key
itself. Alex DeBrie's GitHub design as a team writes it with boto3 straight into moto, served,
and every answer compared with a brute force over the items written; each cost read from the
trace. check-model refused every such key before (a one-template key held `{id}` only)."""

from __future__ import annotations

from typing import Any

from tests.conftest import TeamTable
from tests.engine.test_team_tables import _table
from tests.engine.test_team_types import _codes
from tests.helpers import cost, gql

# Users and organizations share `ACCOUNT#<name>` keys and `entity_type` says which; a user's
# item keeps its username in `Username`, an organization's item keeps a display name in `name`
# (so its `name` field is read from the key); memberships live in their organization's
# partition; users star organizations (listed in reverse on the inverted index) and follow
# users (listed in reverse on GSI1 under `FOLLOWERS#<username>`); GSI1 lists every account.
GITHUB = """
table:
  name: github
  partitionKey: PK
  sortKey: SK
  typeAttribute: entity_type
  indexes:
    inverted: {partitionKey: SK, sortKey: PK}
    GSI1: {partitionKey: GSI1PK, sortKey: GSI1SK}
types:
  User:
    key: "ACCOUNT#{username}"
    typeValue: user
    fields:
      username: {type: String!, attribute: Username}
      fullName: {type: String, attribute: Name}
      email: String!
    indexes: {GSI1: {pk: "ACCOUNTS", sk: "{username}"}}
  Organization:
    key: "ACCOUNT#{name}"
    typeValue: organization
    fields:
      name: {type: String!, from: key}
      displayName: {type: String, attribute: name}
      plan: String!
      ownerName: {type: String, attribute: OwnerName}
      owner: {type: User, ref: ownerName}
    indexes: {GSI1: {pk: "ACCOUNTS", sk: "{name}"}}
  Membership:
    key: {pk: "ACCOUNT#{organizationName}", sk: "MEMBERSHIP#{username}"}
    typeValue: membership
    parent: {type: Organization, field: organization, collection: memberships}
    fields:
      role: String!
      member: {type: User, ref: username}
edges:
  STARS:
    from: User
    to: Organization
    forward: starred
    reverse: {field: stargazers, index: inverted}
  FOLLOWS:
    from: User
    to: User
    forward: following
    reverse: {field: followers, index: GSI1}
    indexes: {GSI1: {pk: "FOLLOWERS#{to}", sk: "{from}"}}
queries:
  accounts:
    types: [User, Organization]
    union: Account
    index: GSI1
    partition: "ACCOUNTS"
"""
GITHUB_TABLE = _table("github", "PK", "SK", ("inverted", "SK", "PK"), ("GSI1", "GSI1PK", "GSI1SK"))


def _user(username: str, name: str, email: str) -> dict[str, Any]:
    key = f"ACCOUNT#{username}"
    return {
        "PK": key,
        "SK": key,
        "entity_type": "user",
        "Username": username,
        "Name": name,
        "email": email,
        "GSI1PK": "ACCOUNTS",
        "GSI1SK": username,
    }


def _org(name: str, display: str, plan: str, owner: str) -> dict[str, Any]:
    key = f"ACCOUNT#{name}"
    item = {"PK": key, "SK": key, "entity_type": "organization", "name": display, "plan": plan}
    return item | {"OwnerName": owner, "GSI1PK": "ACCOUNTS", "GSI1SK": name}


def _follows(follower: str, followed: str) -> dict[str, Any]:
    return {
        "PK": f"ACCOUNT#{follower}",
        "SK": f"ACCOUNT#{followed}",
        "entity_type": "FOLLOWS",
        "GSI1PK": f"FOLLOWERS#{followed}",
        "GSI1SK": follower,
    }


GITHUB_ITEMS: list[dict[str, Any]] = [
    _user("alexdebrie", "Alex DeBrie", "alex@example.com"),
    _user("bob", "Bob", "bob@example.com"),
    _user("carol", "Carol", "carol@example.com"),
    _org("acme", "Acme Corp", "pro", "alexdebrie"),
    _org("globex", "Globex", "free", "bob"),
    _org("initech", "Initech", "free", "acme"),  # an organization: no user of that name
    {
        "PK": "ACCOUNT#acme",
        "SK": "MEMBERSHIP#alexdebrie",
        "entity_type": "membership",
        "role": "owner",
    },
    {"PK": "ACCOUNT#acme", "SK": "MEMBERSHIP#carol", "entity_type": "membership", "role": "member"},
    {"PK": "ACCOUNT#acme", "SK": "MEMBERSHIP#globex", "entity_type": "membership", "role": "peer"},
    {"PK": "ACCOUNT#alexdebrie", "SK": "ACCOUNT#acme", "entity_type": "STARS"},
    {"PK": "ACCOUNT#alexdebrie", "SK": "ACCOUNT#globex", "entity_type": "STARS"},
    {"PK": "ACCOUNT#bob", "SK": "ACCOUNT#acme", "entity_type": "STARS"},
    _follows("bob", "alexdebrie"),
    _follows("carol", "alexdebrie"),
    _follows("alexdebrie", "carol"),
]


def _accounts(kind: str) -> dict[str, dict[str, Any]]:
    """The brute force: a type value's own items, by the name in their key."""
    return {
        i["PK"].removeprefix("ACCOUNT#"): i
        for i in GITHUB_ITEMS
        if i["entity_type"] == kind and i["PK"] == i["SK"]
    }


def _user_answer(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "__typename": "User",
        "id": item["PK"],
        "username": item["Username"],
        "fullName": item["Name"],
        "email": item["email"],
    }


def _org_answer(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "__typename": "Organization",
        "id": item["PK"],
        "name": item["PK"].removeprefix("ACCOUNT#"),  # from the key, not the `name` attribute
        "displayName": item["name"],
        "plan": item["plan"],
    }


USER = "__typename id username fullName email"
ORG = "__typename id name displayName plan"


async def test_lookups_take_the_placeholder_and_node_takes_the_key(team_http: TeamTable) -> None:
    http = await team_http(GITHUB, GITHUB_TABLE, GITHUB_ITEMS)
    users, orgs = _accounts("user"), _accounts("organization")
    for n in sorted({*users, *orgs, "nobody"}):
        body = await gql(
            http,
            f"query($n: String!, $id: ID!) {{ user(username: $n) {{ {USER} }} "
            f"organization(name: $n) {{ {ORG} }} "
            f"node(id: $id) {{ ... on User {{ {USER} }} ... on Organization {{ {ORG} }} }} }}",
            {"n": n, "id": f"ACCOUNT#{n}"},
        )
        assert "errors" not in body, body
        user = _user_answer(users[n]) if n in users else None
        org = _org_answer(orgs[n]) if n in orgs else None
        assert body["data"] == {"user": user, "organization": org, "node": user or org}, n
        # the one key read once, in one round, whichever type it turns out to be
        assert cost(body) == ({"BatchGetItem": 1}, 1)
    one = await gql(http, '{ user(username: "bob") { id username email } }')
    assert one["data"]["user"] == {
        "id": "ACCOUNT#bob",
        "username": "bob",
        "email": "bob@example.com",
    }
    assert cost(one) == ({"BatchGetItem": 1}, 1)
    # the id and the key fields alone: no read (both are in the key)
    bare = await gql(http, '{ organization(name: "acme") { id name } }')
    assert bare["data"]["organization"] == {"id": "ACCOUNT#acme", "name": "acme"}
    # a lookup's id goes back through node(id:) and nodes(ids:)
    nodes = await gql(
        http, '{ nodes(ids: ["ACCOUNT#carol", "ACCOUNT#globex", "ACCOUNT#x"]) { __typename id } }'
    )
    assert nodes["data"]["nodes"] == [
        {"__typename": "User", "id": "ACCOUNT#carol"},
        {"__typename": "Organization", "id": "ACCOUNT#globex"},
        None,
    ]


async def test_refs_parents_edges_and_listings_over_named_keys(team_http: TeamTable) -> None:
    http = await team_http(GITHUB, GITHUB_TABLE, GITHUB_ITEMS)
    body = await gql(
        http,
        '{ acme: organization(name: "acme") { owner { username } '
        "memberships { totalCount edges { node { username role member { username } "
        "organization { name } } } } stargazers { totalCount edges { node { username } } } } "
        'initech: organization(name: "initech") { ownerName owner { username } } '
        'alex: user(username: "alexdebrie") { starred { edges { node { name plan } } } '
        "following { edges { node { username } } } followers { totalCount edges { node { "
        "username } } } } "
        "accounts { totalCount edges { node { __typename "
        "... on User { username } ... on Organization { name } } } } }",
    )
    assert "errors" not in body, body
    data = body["data"]
    users, orgs = _accounts("user"), _accounts("organization")
    acme = data["acme"]
    assert acme["owner"] == {"username": orgs["acme"]["OwnerName"]}
    members = sorted(
        (i for i in GITHUB_ITEMS if i["PK"] == "ACCOUNT#acme" and i["entity_type"] == "membership"),
        key=lambda i: i["SK"],
    )
    assert acme["memberships"]["totalCount"] == len(members)
    assert [e["node"] for e in acme["memberships"]["edges"]] == [
        {
            "username": (u := i["SK"].removeprefix("MEMBERSHIP#")),
            "role": i["role"],
            "member": {"username": u} if u in users else None,  # globex: an organization
            "organization": {"name": "acme"},
        }
        for i in members
    ]

    def edges(label: str, end: str, key: str) -> list[str]:
        far = "SK" if end == "PK" else "PK"
        found = [i for i in GITHUB_ITEMS if i["entity_type"] == label and i[end] == key]
        return [i[far].removeprefix("ACCOUNT#") for i in sorted(found, key=lambda i: i[far])]

    gazers = edges("STARS", "SK", "ACCOUNT#acme")
    assert acme["stargazers"] == {
        "totalCount": len(gazers),
        "edges": [{"node": {"username": u}} for u in gazers],
    }
    # an owner name naming an organization: no user
    assert data["initech"] == {"ownerName": "acme", "owner": None}
    alex = data["alex"]
    assert [e["node"] for e in alex["starred"]["edges"]] == [
        {"name": o, "plan": orgs[o]["plan"]} for o in edges("STARS", "PK", "ACCOUNT#alexdebrie")
    ]
    assert [e["node"]["username"] for e in alex["following"]["edges"]] == edges(
        "FOLLOWS", "PK", "ACCOUNT#alexdebrie"
    )
    followers = edges("FOLLOWS", "SK", "ACCOUNT#alexdebrie")
    assert alex["followers"] == {
        "totalCount": len(followers),
        "edges": [{"node": {"username": u}} for u in followers],
    }
    listed = sorted([*users, *orgs])
    assert data["accounts"]["totalCount"] == len(listed)
    assert [
        (e["node"]["__typename"], e["node"].get("username") or e["node"].get("name"))
        for e in data["accounts"]["edges"]
    ] == [("User" if n in users else "Organization", n) for n in listed]
    # a typical query: an organization with its first members (its item and its partition in
    # one Query, then the members' users in one BatchGetItem), as for `ACCOUNT#{id}`
    typical = await gql(
        http,
        '{ organization(name: "acme") { displayName '
        "memberships(first: 10) { edges { node { role member { email } } } } } }",
    )
    assert "errors" not in typical, typical
    assert cost(typical) == ({"BatchGetItem": 1, "Query": 1}, 2)


async def test_mutations_take_the_placeholder_and_edges_name_their_ends_by_it(
    team_http: TeamTable, team_client: Any
) -> None:
    http = await team_http(GITHUB, GITHUB_TABLE, GITHUB_ITEMS)

    def get(pk: str, sk: str | None = None) -> dict[str, Any] | None:
        key = {"PK": {"S": pk}, "SK": {"S": sk or pk}}
        item: dict[str, Any] | None = team_client.get_item(TableName="github", Key=key).get("Item")
        return item

    created = await gql(
        http,
        'mutation { createUser(input: {username: "dave", fullName: "Dave", email: "d@e.f"}) '
        "{ id username } "
        'createOrganization(input: {name: "hooli", displayName: "Hooli", plan: "pro", '
        'ownerName: "dave"}) { id name displayName owner { username } } '
        'addStars(userUsername: "dave", organizationName: "hooli") { node { name } } '
        'addFollows(fromUserUsername: "dave", toUserUsername: "alexdebrie") { node { username } } '
        'createMembership(input: {organizationName: "hooli", username: "dave", role: "owner"}) '
        "{ member { username } } }",
    )
    assert "errors" not in created, created
    assert created["data"]["createUser"] == {"id": "ACCOUNT#dave", "username": "dave"}
    assert created["data"]["createOrganization"] == {
        "id": "ACCOUNT#hooli",
        "name": "hooli",
        "displayName": "Hooli",
        "owner": {"username": "dave"},
    }
    dave, hooli = get("ACCOUNT#dave"), get("ACCOUNT#hooli")
    assert dave is not None and hooli is not None
    assert dave["entity_type"] == {"S": "user"} and dave["Username"] == {"S": "dave"}
    assert dave["GSI1SK"] == {"S": "dave"}
    # `name` reads the key: the attribute `name` holds the display name, written by that field
    assert hooli["name"] == {"S": "Hooli"} and hooli["entity_type"] == {"S": "organization"}
    follows = get("ACCOUNT#dave", "ACCOUNT#alexdebrie")
    assert follows is not None and follows["GSI1PK"] == {"S": "FOLLOWERS#alexdebrie"}
    assert follows["GSI1SK"] == {"S": "dave"}  # {from}: the follower's username
    assert get("ACCOUNT#dave", "ACCOUNT#hooli") is not None
    listed = await gql(
        http,
        '{ user(username: "alexdebrie") { followers { edges { node { username } } } } '
        'organization(name: "hooli") { stargazers { edges { node { username } } } } }',
    )
    assert [e["node"]["username"] for e in listed["data"]["user"]["followers"]["edges"]] == [
        "bob",
        "carol",
        "dave",
    ]
    assert listed["data"]["organization"]["stargazers"]["edges"] == [{"node": {"username": "dave"}}]
    # the key is an organization's, or a user's: nothing is written
    before = team_client.scan(TableName="github")["Items"]
    for mutation, code in (
        ('createUser(input: {username: "acme", email: "a@b.c"}) { id }', "CONFLICT"),
        ('updateUser(input: {username: "acme", email: "x@y.z"}) { id }', "NOT_FOUND"),
        ('updateOrganization(input: {name: "bob", plan: "pro"}) { id }', "NOT_FOUND"),
        ('deleteUser(username: "globex") { id }', "NOT_FOUND"),
        ('deleteOrganization(name: "carol") { id }', "NOT_FOUND"),
        ('addStars(userUsername: "acme", organizationName: "globex") { cursor }', "NOT_FOUND"),
        ('addStars(userUsername: "bob", organizationName: "carol") { cursor }', "NOT_FOUND"),
        ('addFollows(fromUserUsername: "bob", toUserUsername: "nobody") { cursor }', "NOT_FOUND"),
        ('createUser(input: {username: "", email: "a@b.c"}) { id }', "BAD_USER_INPUT"),
    ):
        body = await gql(http, f"mutation {{ {mutation} }}")
        assert _codes(body) == {code}, (mutation, body)
    assert len(team_client.scan(TableName="github")["Items"]) == len(before)
    updated = await gql(
        http,
        'mutation { updateUser(input: {username: "dave", email: "dave@example.com"}) '
        "{ id username email } "
        'removeFollows(fromUserUsername: "dave", toUserUsername: "alexdebrie") }',
    )
    assert "errors" not in updated, updated
    assert updated["data"] == {
        "updateUser": {"id": "ACCOUNT#dave", "username": "dave", "email": "dave@example.com"},
        "removeFollows": True,
    }
    assert get("ACCOUNT#dave", "ACCOUNT#alexdebrie") is None
    deleted = await gql(
        http,
        'mutation { deleteUser(username: "dave") { id } deleteOrganization(name: "hooli") { id } }',
    )
    assert deleted["data"] == {
        "deleteUser": {"id": "ACCOUNT#dave"},
        "deleteOrganization": {"id": "ACCOUNT#hooli"},
    }, deleted
    # the users, their edges, the organization and its membership are gone; nothing else
    after = team_client.scan(TableName="github")["Items"]
    assert not [i for i in after if "dave" in str(i) or "hooli" in str(i)]
    assert len(after) == len(GITHUB_ITEMS)
    gone = await gql(http, '{ user(username: "dave") { id } node(id: "ACCOUNT#hooli") { id } }')
    assert gone["data"] == {"user": None, "node": None}
