"""The wire: DynamoDB's data plane clients (the lean one and botocore's), expressions, DynamoDB
JSON, the embedded server, capabilities and streams."""
