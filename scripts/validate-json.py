#!/usr/bin/env python3
"""Validate Myeline payloads against the JSON Schemas in docs/schema.

Usage: validate-json.py [--schema-dir DIR] MANIFEST

MANIFEST is a JSON file listing the cases, with paths relative to the manifest's directory:

    {"cases": [{"name": "status-online", "schema": "status.json",
                "instance": "status-online.json", "valid": true}, ...]}

Every schema in the schema directory is checked against draft 2020-12 and made available by its
$id, so schemas may refer to each other (for example to common.json). Each case is validated with
Draft202012Validator and format checking (jsonschema 4.10 or later), and one line is printed per
case, tab-separated:

    PASS|FAIL <TAB> name <TAB> expected valid|invalid <TAB> actual valid|invalid <TAB> first error

Exit status: 0 when every case had its expected result, 1 when some did not, 2 when the cases
cannot be checked (jsonschema missing, unreadable manifest, schema or instance, invalid schema).
"""

import argparse
import json
import sys
from pathlib import Path

try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
except ImportError as error:
    print(
        f"validate-json.py: cannot import jsonschema ({error}); install it with "
        "'apt-get install python3-jsonschema' or 'python3 -m pip install jsonschema'",
        file=sys.stderr,
    )
    sys.exit(2)

try:  # jsonschema 4.18 and later resolve $ref through a referencing.Registry.
    from referencing import Registry, Resource
except ImportError:  # Older ones, such as Debian 12's 4.10, through a RefResolver store.
    Registry = None


def load_json(path):
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError) as error:
        print(f"validate-json.py: cannot read {path}: {error}", file=sys.stderr)
        sys.exit(2)


def load_schemas(directory):
    """Checks every schema and returns them by file name."""
    schemas = {}
    for path in sorted(Path(directory).glob("*.json")):
        schema = load_json(path)
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as error:
            print(f"validate-json.py: {path} is not a valid draft 2020-12 schema: {error}", file=sys.stderr)
            sys.exit(2)
        if "$id" not in schema:
            print(f"validate-json.py: {path} has no $id", file=sys.stderr)
            sys.exit(2)
        schemas[path.name] = schema
    return schemas


def make_validators(schemas):
    """One draft 2020-12 validator with format checking per schema file; $ref resolves to any schema by $id."""
    checker = Draft202012Validator.FORMAT_CHECKER
    if Registry is not None:
        registry = Registry().with_resources(
            (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
        )
        return {
            name: Draft202012Validator(schema, registry=registry, format_checker=checker)
            for name, schema in schemas.items()
        }
    from jsonschema import RefResolver

    store = {schema["$id"]: schema for schema in schemas.values()}
    return {
        name: Draft202012Validator(
            schema, resolver=RefResolver.from_schema(schema, store=store), format_checker=checker
        )
        for name, schema in schemas.items()
    }


def first_error(validator, instance):
    errors = sorted(validator.iter_errors(instance), key=lambda error: list(error.absolute_path))
    if not errors:
        return None
    error = errors[0]
    location = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return " ".join(f"{location}: {error.message}".split())


def main():
    default_schemas = Path(__file__).resolve().parent.parent / "docs" / "schema"
    parser = argparse.ArgumentParser(description="Validate Myeline payloads against docs/schema.")
    parser.add_argument("manifest", help="JSON file listing the cases")
    parser.add_argument("--schema-dir", default=str(default_schemas), help="directory of the schemas")
    arguments = parser.parse_args()

    validators = make_validators(load_schemas(arguments.schema_dir))
    manifest_path = Path(arguments.manifest)
    cases = load_json(manifest_path).get("cases", [])
    if not cases:
        print(f"validate-json.py: {manifest_path} lists no cases", file=sys.stderr)
        return 2

    unexpected = 0
    for case in cases:
        name, schema_name, expected = case["name"], case["schema"], case["valid"]
        if schema_name not in validators:
            print(
                f"validate-json.py: case {name}: no schema {schema_name} in {arguments.schema_dir}", file=sys.stderr
            )
            return 2
        instance = load_json(manifest_path.parent / case["instance"])
        error = first_error(validators[schema_name], instance)
        actual = error is None
        if actual != expected:
            unexpected += 1
        verdict = "PASS" if actual == expected else "FAIL"
        words = {True: "valid", False: "invalid"}
        print(f"{verdict}\t{name}\t{words[expected]}\t{words[actual]}\t{error or '-'}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
